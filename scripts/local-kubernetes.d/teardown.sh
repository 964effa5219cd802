# local-kubernetes.d/teardown.sh — sourced by local-kubernetes.sh: everything `down` does, in
# order (components stopped by recorded pid, containers removed, mounts under DIR unmounted,
# pod cgroups removed, kernel settings restored, host leftovers removed). Uses the main
# script's constants and helpers.
# ---------------------------------------------------------------------------------------------
# down: stop by pid, remove containers, unmount, remove cgroups, restore sysctls

# stop_pid PID WHAT TIMEOUT CHECK...: SIGTERM, wait up to TIMEOUT seconds while CHECK succeeds,
# then SIGKILL. CHECK re-verifies the pid's identity, so a reused pid is never signalled.
stop_pid() {
    local pid=$1 what=$2 timeout=$3 deadline
    shift 3
    "$@" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + timeout))
    while "$@" && ((SECONDS < deadline)); do sleep 0.1; done
    if "$@"; then
        log "$what (pid $pid) still runs ${timeout}s after SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        deadline=$((SECONDS + 10))
        while "$@" && ((SECONDS < deadline)); do sleep 0.1; done
    fi
    ! "$@" || { log "$what (pid $pid) is still alive"; return 1; }
}

stop_component() {
    local name=$1 pid
    if pid=$(live_pid "$name"); then
        log "stopping $name (pid $pid)"
        stop_pid "$pid" "$name" "$STOP_TIMEOUT_S" is_our_process "$pid" || return 1
    fi
    rm -f "$DIR/pids/$name.pid"
}

# Through containerd, while it runs: kill and delete every task and container it has.
remove_containers_via_containerd() {
    live_pid containerd >/dev/null && [[ -S $DIR/run/containerd.sock ]] || return 0
    local ns id
    for ns in $(ctr_cmd namespaces ls -q 2>/dev/null); do
        for id in $(ctr_cmd -n "$ns" tasks ls -q 2>/dev/null); do
            ctr_cmd -n "$ns" tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true
        done
        for id in $(ctr_cmd -n "$ns" tasks ls -q 2>/dev/null); do
            ctr_cmd -n "$ns" tasks delete -f "$id" >/dev/null 2>&1 || true
        done
        for id in $(ctr_cmd -n "$ns" containers ls -q 2>/dev/null); do
            ctr_cmd -n "$ns" containers delete "$id" >/dev/null 2>&1 || true
        done
    done
}

# A container's init process: its cgroup path names the container id.
is_container_init() { [[ -r /proc/$1/cgroup ]] && grep -q "$2" "/proc/$1/cgroup" 2>/dev/null && ! is_zombie "$1"; }
is_zombie() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0; s=${s##*) }; [[ ${s%% *} == Z ]]; }
# A shim of this cluster's containerd: its command line names DIR's containerd socket.
is_shim() {
    local c
    c=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
    [[ $c == *containerd-shim*" -address $DIR/run/containerd.sock"* ]] && ! is_zombie "$1"
}

task_bundles() { compgen -G "$DIR/containerd/state/io.containerd.runtime.v2.task/*/*/" || true; }

# Containers left behind while containerd is gone (it died, or was killed with up): start it
# again on the same state, so that it reconnects to its shims and can remove them.
restart_containerd_for_cleanup() {
    [[ -n $(task_bundles) && -f $DIR/containerd/config.toml ]] || return 0
    live_pid containerd >/dev/null && return 0
    log "containers are left without containerd; starting it again to remove them"
    start_process containerd containerd --config "$DIR/containerd/config.toml"
    local deadline=$((SECONDS + 20))
    until containerd_ready >/dev/null 2>&1 || ((SECONDS >= deadline)); do sleep 0.1; done
}

# Last resort, containerd being gone: kill each container's init process that containerd
# recorded (init.pid in its bundle), and the shim that is its parent, by pid, each one checked
# first (the init's cgroup names the container id; the shim's command line names DIR).
kill_recorded_container_pids() {
    local bundle id pid shim
    for bundle in $(task_bundles); do
        id=$(basename "$bundle")
        [[ -f $bundle/init.pid ]] || continue
        pid=$(<"$bundle/init.pid")
        if ! [[ $pid =~ ^[0-9]+$ ]] || ! is_container_init "$pid" "$id"; then continue; fi
        shim=$(awk '{ sub(/.*\) /, ""); print $2 }' "/proc/$pid/stat" 2>/dev/null || true)
        log "killing container ${id:0:12} (pid $pid)"
        kill -KILL "$pid" 2>/dev/null || true
        if [[ $shim =~ ^[0-9]+$ ]] && is_shim "$shim"; then
            stop_pid "$shim" "containerd shim" 3 is_shim "$shim" || true
        fi
    done
}

mounts_under_dir() { awk -v d="$DIR/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -ru; }

unmount_under_dir() {
    local m
    for _ in 1 2 3 4 5; do
        [[ -n $(mounts_under_dir) ]] || return 0
        while read -r m; do
            umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        done < <(mounts_under_dir)
    done
    [[ -z $(mounts_under_dir) ]] || { log "still mounted under $DIR: $(mounts_under_dir | tr '\n' ' ')"; return 1; }
}

# The kubelet's pod cgroups (cgroupfs driver): kubepods in every hierarchy, deepest first.
# rmdir removes only empty cgroups, so nothing that still runs is touched.
remove_pod_cgroups() {
    local root left=""
    for root in /sys/fs/cgroup/kubepods /sys/fs/cgroup/*/kubepods; do
        [[ -d $root ]] || continue
        find "$root" -depth -type d -exec rmdir {} \; 2>/dev/null || true
        [[ ! -d $root ]] || left+=" $root"
    done
    [[ -z $left ]] || { log "cgroups still in use:$left"; return 1; }
}

restore_sysctls() {
    [[ -f $DIR/sysctl.saved ]] || return 0
    local key value
    while IFS='=' read -r key value; do
        [[ -n $key && -n $value ]] || continue
        [[ $(<"/proc/sys/${key//.//}") == "$value" ]] || {
            echo "$value" >"/proc/sys/${key//.//}" || { log "could not restore $key=$value"; return 1; }
        }
    done <"$DIR/sysctl.saved"
}

# The kubelet links each container's log into /var/log/containers; drop the links into DIR.
remove_log_links() {
    [[ -d /var/log/containers ]] || return 0
    local link
    for link in /var/log/containers/*.log; do
        [[ -L $link && $(readlink "$link") == "$DIR/"* ]] && rm -f "$link"
    done
    return 0
}

# The kubelet's device-plugin socket (when nothing listens on it any more) and the host dirs
# that up recorded as new, if they are empty.
remove_host_leftovers() {
    if [[ -S $DEVICE_PLUGIN_SOCKET ]] &&
        ! awk -v p="$DEVICE_PLUGIN_SOCKET" '$NF == p { found = 1 } END { exit !found }' /proc/net/unix; then
        rm -f "$DEVICE_PLUGIN_SOCKET"
    fi
    [[ -f $DIR/host-dirs.created ]] || return 0
    local d
    while read -r d; do
        [[ -n $d && -d $d ]] && { rmdir "$d" 2>/dev/null || true; }
    done <"$DIR/host-dirs.created"
    return 0
}

# Everything down does; returns non-zero when something could not be cleaned.
teardown() {
    local ok=true i
    stop_component kubelet || ok=false
    restart_containerd_for_cleanup
    remove_containers_via_containerd
    for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
        [[ ${COMPONENTS[i]} == kubelet ]] && continue
        stop_component "${COMPONENTS[i]}" || ok=false
    done
    kill_recorded_container_pids
    unmount_under_dir || ok=false
    remove_pod_cgroups || ok=false
    restore_sysctls || ok=false
    remove_log_links
    remove_host_leftovers
    $ok
}
