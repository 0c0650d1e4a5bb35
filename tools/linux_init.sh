#!/bin/sh
# The Linux baseline guest's init (docs/linux-baseline.md), run by busybox's shell.
#
# As /init: brings up eth0 as QEMU's user network expects it, starts one redis-server per core,
# pinned to that core, on 6379 + core, and listens for the host's window marks on the next port.
# As `/init mark` (run by nc for each connection to that port): one mark.  The host sends a line
# "<tag>" or "<tag> print"; the guest saves /proc/stat and /proc/uptime under that tag, answers
# +OK, and with "print" then prints a `procstat` record per core for every saved tag.  Records
# are printed only after the window's last snapshot, so that formatting them costs nothing
# inside the window.

BASE_PORT=6379

mark() {
    read -r tag word
    tag=$(echo "$tag" | tr -cd 0-9)
    cat /proc/uptime /proc/stat > "/tmp/mark.$tag"
    echo "+OK"
    case "$word" in print*) ;; *) return ;; esac
    for saved in /tmp/mark.*; do
        awk -v tag="${saved#/tmp/mark.}" '
            NR == 1 { uptime = $1 }
            /^cpu[0-9]/ {
                printf "@@ {\"procstat\": {\"tag\": %d, \"core\": %d, \"uptime\": %s, \"user\": %s, " \
                       "\"nice\": %s, \"system\": %s, \"idle\": %s, \"iowait\": %s, \"irq\": %s, " \
                       "\"softirq\": %s, \"steal\": %s}}\n", tag, substr($1, 4), uptime, $2, $3, $4,
                       $5, $6, $7, $8, $9
            }' "$saved" > /dev/console
        rm "$saved"
    done
}

if [ "$1" = mark ]; then
    mark
    exit 0
fi

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
while read -r module; do
    insmod "$module" || echo "@@ {\"linux\": {\"error\": \"insmod $module failed\"}}"
done < /etc/modules

# The NIC's driver may bind after insmod returns (the i.MX6 ENET waits for its PHY).
tries=0
until [ -e /sys/class/net/eth0 ]; do
    tries=$((tries + 1))
    if [ "$tries" -gt 300 ]; then
        echo "@@ {\"linux\": {\"error\": \"no eth0\"}}"
        dmesg | tail -20
        break
    fi
    sleep 0.1
done
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2

# Linux boots with maxcpus=1 and the other cores come online here (docs/linux-baseline.md,
# "More than one CPU under -icount"): at boot Linux waits for a new core in loops that never
# let QEMU 7.2's round-robin reach that core under -icount.
for online in /sys/devices/system/cpu/cpu[0-9]*/online; do
    [ -e "$online" ] && [ "$(cat "$online")" = 0 ] || continue
    echo 1 > "$online" || echo "@@ {\"linux\": {\"error\": \"${online%/online} did not come online\"}}"
done

cores=$(nproc)
core=0
while [ "$core" -lt "$cores" ]; do
    taskset -c "$core" redis-server --port $((BASE_PORT + core)) --bind 0.0.0.0 --save "" \
        --appendonly no --protected-mode no --dir /tmp --logfile "/tmp/redis-$core.log" &
    core=$((core + 1))
done
control=$((BASE_PORT + cores))
nc -ll -p "$control" -e /init mark &

ports=""
core=0
while [ "$core" -lt "$cores" ]; do
    port=$((BASE_PORT + core))
    tries=0
    until netstat -ltn | grep -q ":$port "; do
        tries=$((tries + 1))
        if [ "$tries" -gt 600 ]; then
            echo "@@ {\"linux\": {\"error\": \"redis-server on port $port did not listen\"}}"
            cat "/tmp/redis-$core.log"
            break
        fi
        sleep 0.1
    done
    ports="$ports${ports:+, }$port"
    core=$((core + 1))
done
echo "@@ {\"linux\": {\"release\": \"$(uname -r)\", \"cores\": $cores, \"marks\": $control}}"
version=$(redis-server --version | sed 's/.* v=\([^ ]*\).*/\1/')
echo "@@ {\"redis\": {\"ports\": [$ports], \"server\": \"Debian's redis-server $version\"}}"
wait
