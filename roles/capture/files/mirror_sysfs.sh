#!/bin/sh
# Mirror sysfs attributes into a gzip'd tar, for a gpurack capture bundle (sys/ in it).
# Usage: mirror_sysfs.sh ARCHIVE DEPTH:GLOB...   e.g. 0:sys/bus/pci/devices/*
# Same rules as tools/gpurack/sysfs.py: small readable regular files only, symlinks not
# followed below a match, noisy folders and side-effect files skipped, PCI functions
# limited to NVIDIA, Mellanox and NVMe. Reads only; writes only ARCHIVE and a temp dir.
set -eu
archive=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

skip_dir() {
  case $1 in sections | notes | gids | pkeys | gid_attrs | trace | msi_irqs | queues | power | mq) return 0 ;; esac
  return 1
}

skip_file() {
  case $1 in config | rom | vpd | resource* | reset* | remove* | rescan | *bind | new_id) return 0 ;; esac
  return 1
}

wanted_pci() {
  vendor=$(cat "$1/vendor" 2>/dev/null || true)
  class=$(cat "$1/class" 2>/dev/null || true)
  case $vendor in 0x10de | 0x15b3) return 0 ;; esac
  case $class in 0x0108*) return 0 ;; esac
  return 1
}

# copy_tree SRC TARGET DEPTH: readable regular files of SRC, real folders DEPTH levels down.
copy_tree() {
  local src=$1 target=$2 depth=$3 child name
  for child in "$src"/*; do
    name=${child##*/}
    if [ -L "$child" ]; then
      continue
    elif [ -d "$child" ]; then
      if [ "$depth" -gt 0 ] && ! skip_dir "$name"; then
        copy_tree "$child" "$target/$name" $((depth - 1))
      fi
    elif [ -f "$child" ] && ! skip_file "$name"; then
      mkdir -p "$target"
      # Write-only attributes fail to read: drop them.
      timeout 2 head -c 65536 "$child" >"$target/$name" 2>/dev/null || rm -f "$target/$name"
    fi
  done
}

for spec in "$@"; do
  depth=${spec%%:*}
  pattern=${spec#*:}
  for entry in /$pattern; do
    [ -e "$entry" ] || continue
    real=$(readlink -f "$entry")
    case $real in /sys/*) ;; *) continue ;; esac
    [ -d "$real" ] || continue
    case $pattern in sys/bus/pci/devices/*) wanted_pci "$real" || continue ;; esac
    copy_tree "$real" "$work$entry" "$depth"
    if [ -L "$entry/device" ]; then
      copy_tree "$(readlink -f "$entry/device")" "$work$entry/device" 0
    fi
  done
done

mkdir -p "$work/sys"
tar -C "$work" -czf "$archive" sys
