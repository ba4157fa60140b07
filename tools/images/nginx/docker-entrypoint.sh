#!/bin/sh
# As the public image's entry point when the command is nginx: each file of
# $NGINX_ENVSUBST_TEMPLATE_DIR (/etc/nginx/templates) ending in $NGINX_ENVSUBST_TEMPLATE_SUFFIX
# (.template) is written to $NGINX_ENVSUBST_OUTPUT_DIR (/etc/nginx/conf.d) without the suffix, with
# ${VAR} replaced for every variable set in the environment (others, and nginx's own $vars, stay).
set -e
if [ "$1" = nginx ] || [ "$1" = nginx-debug ]; then
  templates=${NGINX_ENVSUBST_TEMPLATE_DIR:-/etc/nginx/templates}
  suffix=${NGINX_ENVSUBST_TEMPLATE_SUFFIX:-.template}
  output=${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}
  if [ -d "$templates" ]; then
    defined=$(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/${\1}/p' | tr '\n' ' ')
    find "$templates" -follow -type f -name "*$suffix" | while read -r template; do
      relative=${template#"$templates/"}
      target="$output/${relative%"$suffix"}"
      mkdir -p "$(dirname "$target")"
      echo "$0: rendering $template to $target"
      envsubst "$defined" <"$template" >"$target"
    done
  fi
fi
exec "$@"
