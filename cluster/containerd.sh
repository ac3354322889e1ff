# shellcheck shell=bash
# Sourced by kubernetes.sh (the single-node cluster) and nodes-k8s.sh (the
# emulated nodes): one CRI configuration for containerd, so a workaround for
# this kernel is made in one place and holds on both.

# containerd_cri_toml ROOT STATE SOCKET RUNC_ROOT SANDBOX_IMAGE CNI_CONF_DIR [RUNC_BINARY]:
# containerd's config on stdout. A caller appends its own tables (a registry
# mirror, the opt plugin's path) after it.
containerd_cri_toml() {
  local root=$1 state=$2 socket=$3 runc_root=$4 sandbox=$5 cni_conf=$6 runc_binary=${7:-}
  cat <<TOML
version = 2
root = "$root"
state = "$state"
[grpc]
  address = "$socket"
[plugins."io.containerd.grpc.v1.cri"]
  # no AppArmor in this kernel
  disable_apparmor = true
  # without CAP_SYS_RESOURCE runc cannot give the sandbox its oom_score_adj of -998
  restrict_oom_score_adj = true
  sandbox_image = "$sandbox"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$cni_conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    Root = "$runc_root"
TOML
  if [ -n "$runc_binary" ]; then
    printf '    BinaryName = "%s"\n' "$runc_binary"
  fi
}
