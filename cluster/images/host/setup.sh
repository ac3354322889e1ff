#!/bin/sh
# Makes the image of an emulated host (cluster/hosts.sh) a plain Debian
# machine as `just remote-up` meets one: systemd as PID 1, sshd, a user with
# passwordless sudo, nothing of orchbench's installed.
set -eu
# The user an inventory names (cloud images call theirs debian); its
# authorized_keys are given per host when the host starts.
useradd --create-home --shell /bin/bash debian
printf 'debian ALL=(ALL) NOPASSWD:ALL\n' >/etc/sudoers.d/debian
chmod 0440 /etc/sudoers.d/debian
install -d -m 0700 -o debian -g debian /home/debian/.ssh
# Keys only, as on a cloud host; every host makes its own host keys at its
# first boot (the image ships none, or all hosts would share them).
cat >/etc/ssh/sshd_config.d/orchbench.conf <<'CONF'
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UseDNS no
CONF
rm -f /etc/ssh/ssh_host_*
cat >/etc/systemd/system/ssh-hostkeys.service <<'UNIT'
[Unit]
Description=This host's own SSH host keys
Before=ssh.service
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -A

[Install]
WantedBy=multi-user.target
UNIT
systemctl enable ssh-hostkeys.service ssh.service
# What a container cannot do, or has no hardware for: consoles, udev,
# the kernel's own file systems, which the container runtime mounted.
systemctl mask getty.target console-getty.service systemd-udevd.service \
  systemd-udev-trigger.service systemd-modules-load.service sys-kernel-debug.mount \
  sys-kernel-tracing.mount sys-kernel-config.mount sys-fs-fuse-connections.mount \
  systemd-remount-fs.service systemd-firstboot.service systemd-sysctl.service 2>/dev/null
# A random machine id per boot (the container's), not one baked in.
: >/etc/machine-id
