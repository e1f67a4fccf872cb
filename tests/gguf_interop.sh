#!/bin/sh
# The GGUF interop test: tests/gguf_interop.py writes files, test_gguf_interop reads them and
# writes its own, the script reads those and compares them byte for byte with its own.
# Exits 77 (CTest: skipped) without python3 on PATH.
#   gguf_interop.sh PROGRAM SCRIPT WORK_DIR
set -u
prog=$1 script=$2 work=$3
if ! command -v python3 >/dev/null 2>&1; then
  echo "gguf_interop: SKIPPED: python3 is not on PATH (the independent writer and reader need it)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
python3 "$script" write "$work" || exit 1
"$prog" "$work" || exit 1
python3 "$script" check "$work"
