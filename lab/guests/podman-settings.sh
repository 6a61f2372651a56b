# shellcheck shell=bash
# Sourced by the scripts that build images with podman on this machine (lab/guests/guest-image.sh,
# tools/ee/base-image.sh): write_containers_conf <path> writes the podman settings this machine's kernel needs.

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

# prune_images <repository> <keep>...: removes the repository's other tags (images of earlier build inputs).
prune_images() {
  local name=$1 old
  shift
  for old in $(podman images --format '{{.Repository}}:{{.Tag}}' "$name"); do
    case " $* " in *" $old "*) ;; *) podman rmi "$old" >/dev/null 2>&1 || true ;; esac
  done
}
