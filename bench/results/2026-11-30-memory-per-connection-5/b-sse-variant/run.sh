#!/bin/bash
# usage: run.sh RELEASE(0|1) N — prints RSS per connection after two full GCs ((loaded - idle) / N)
cd "$(dirname "$0")"
export PATH=$(../../../../tools/toolchain.sh):$PATH
PORT=$((21000 + RANDOM % 1000))
RELEASE=$1 PORT=$PORT node --expose-gc --max-semi-space-size=8 hub.mjs & hub=$!
sleep 1
idle=$(curl -s localhost:$PORT/gc)
out=$(mktemp)
node client.mjs $PORT $2 > "$out" & cl=$!
until grep -q connected "$out"; do sleep 0.5; done
sleep 2
loaded=$(curl -s localhost:$PORT/gc); count=$(curl -s localhost:$PORT/count)
echo "release=$1 n=$2 held=$count per-connection=$(( (loaded - idle) / $2 )) B"
kill $cl $hub; rm -f "$out"
