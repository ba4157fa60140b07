#!/usr/bin/env bash
# Turns a `debootstrap --variant=minbase bookworm` tree into what debian:bookworm-slim is: apt from
# this machine's Debian mirror (its deb822 sources file), no documentation, man pages or locales
# (dpkg leaves them out of later installs too), no apt caches, and no services started by package
# installs. Usage: slim.sh <rootfs> <debian.sources>
set -euo pipefail
rootfs=$1 sources=$2

rm -f "$rootfs/etc/apt/sources.list"
install -m 0644 "$sources" "$rootfs/etc/apt/sources.list.d/debian.sources"

cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
CFG
cat >"$rootfs/etc/apt/apt.conf.d/slim" <<'CFG'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
# A container has no init: package scripts must not try to start their services.
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"

find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$rootfs/usr/share/man/"* "$rootfs/usr/share/info/"* "$rootfs/usr/share/locale/"* \
  "$rootfs/var/cache/apt/"*.bin "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"* \
  "$rootfs/var/log/"*.log "$rootfs/var/log/apt/"* "$rootfs/tmp/"* "$rootfs/root/.bash_history"
# Left empty: the container runtime provides them.
: >"$rootfs/etc/hostname"
: >"$rootfs/etc/resolv.conf"
