# shellcheck shell=bash
# Sourced by the scripts that build Debian 12 images with debootstrap and podman on this machine
# (lab/guests/guest-image.sh, tools/ee/base-image.sh), since no image can be pulled here.

# write_containers_conf <path>: the podman settings this machine's kernel needs.
# Rootful podman 4.3 on this kernel (hybrid cgroups, no CAP_SYS_RESOURCE): runc instead of crun, and ulimits a
# container may raise to without that capability.
write_containers_conf() {
  local conf=$1 nofile nproc pid_max
  nofile=$(ulimit -Hn)
  nproc=$(ulimit -Hu)
  pid_max=$(cat /proc/sys/kernel/pid_max)
  [ "$nofile" = unlimited ] && nofile=1048576
  [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ] && nproc=$pid_max
  mkdir -p "$(dirname "$conf")"
  cat >"$conf.new" <<TOML
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
TOML
  mv "$conf.new" "$conf"
}

# image_build_begin <containers.conf path> <lock name>: the podman settings written and exported, and the build's
# lock held (file descriptor 9), so builds started together wait for the first instead of repeating it.
image_build_begin() {
  write_containers_conf "$1"
  export CONTAINERS_CONF=$1
  exec 9>"$(dirname "$1")/$2.lock"
  flock 9
}

# prune_images <repository> <keep>...: removes the repository's other tags (images of earlier build inputs).
prune_images() {
  local name=$1 old
  shift
  for old in $(podman images --format '{{.Repository}}:{{.Tag}}' "$name"); do
    case " $* " in *" $old "*) ;; *) podman rmi "$old" >/dev/null 2>&1 || true ;; esac
  done
}

# debootstrap_rootfs <rootfs> <packages> <mirror>: a minimal Debian 12 root filesystem with <packages> (comma
# separated), whose apt installs further packages from <mirror>.
debootstrap_rootfs() {
  local rootfs=$1 packages=$2 mirror=$3
  debootstrap --variant=minbase --include="$packages" bookworm "$rootfs" "$mirror" >"$rootfs.debootstrap.log" 2>&1 \
    || { tail -n 30 "$rootfs.debootstrap.log" >&2; return 1; }
  echo "deb $mirror bookworm main" >"$rootfs/etc/apt/sources.list"
}

# import_rootfs <rootfs> <image> [<podman import --change>]...: the root filesystem, without apt's downloads, as
# image <image>.
import_rootfs() {
  local rootfs=$1 image=$2 change
  local changes=()
  shift 2
  for change in "$@"; do changes+=(--change "$change"); done
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb
  tar -C "$rootfs" -c . | podman import "${changes[@]}" - "$image" >"$rootfs.import.log" 2>&1 \
    || { cat "$rootfs.import.log" >&2; return 1; }
}
