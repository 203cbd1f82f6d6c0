#!/bin/sh
# gpurack lab only: the emulated nvidia kernel module of a lab container (gpurack_lab.driver).
# The first driver installed after a boot loads, as modprobe loads a fresh install; a loaded
# driver stays until the next boot (a container restart clears /run). The loaded version goes
# where the kernel would show it, and replaces the version the profile's capture reports.
set -eu
loaded=/run/gpurack-lab/nvidia/version
profile=/opt/gpurack-lab/profile
reported=/opt/gpurack-lab/reported-driver-version
captured=/opt/gpurack-lab/captured-driver-version

[ -e "$loaded" ] && exit 0
version=""
for pkg in nvidia-kernel-open-dkms nvidia-kernel-dkms; do
  status=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$pkg" 2>/dev/null) || continue
  case $status in
    "installed "*) version=${status#installed }; version=${version#*:}; version=${version%%-*}; break ;;
  esac
done
[ -n "$version" ] || exit 0
mkdir -p "${loaded%/*}"
echo "$version" >"$loaded"

# The profile reports the captured driver until the first load, then the loaded one.
if [ -e "$reported" ]; then old=$(cat "$reported"); elif [ -e "$captured" ]; then old=$(cat "$captured"); else exit 0; fi
if [ "$old" != "$version" ]; then
  pattern=$(printf '%s' "$old" | sed 's/\./\\./g')
  grep -rlF -- "$old" "$profile" | while IFS= read -r file; do sed -i "s/$pattern/$version/g" "$file"; done
fi
echo "$version" >"$reported"
