#!/bin/sh
# The safetensors interop test of one device: tests/safetensors_interop.py writes files,
# test_safetensors_interop loads them onto the device and saves its own, the script checks
# those. Exits 77 (CTest: skipped) without python3 on PATH, or without the device.
#   safetensors_interop.sh PROGRAM SCRIPT WORK_DIR cpu|autodiff|vulkan
set -u
prog=$1 script=$2 work=$3 device=$4
if ! command -v python3 >/dev/null 2>&1; then
  echo "safetensors_interop: SKIPPED: python3 is not on PATH (the independent writer and reader need it)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
python3 "$script" write "$work" || exit 1
"$prog" "$work" "$device"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
python3 "$script" check "$work"
