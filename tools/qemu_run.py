#!/usr/bin/env python3
"""Boot a kernel image in QEMU, stream its console, and exit with the guest's status.

This is what `make qemu` runs.  The guest ends a run by printing the record
`@@ {"done": true, "status": N}` and then stopping QEMU through its exit
device (x86_64: isa-debug-exit; arm-imx6: semihosting).  The status of the
done record is authoritative: a guest that stops without one (a triple fault
with -no-reboot, a crash) has failed, whatever QEMU's own exit code says.

Exit codes of this script:
    N     the guest's status from its done record
    3     QEMU ended without a done record
    4     the kernel panicked (QEMU is stopped PANIC_GRACE seconds after the
          first `panic` record, so other cores' panics are printed too)
    124   the guest did not finish within --timeout seconds of its own progress
          (see GuestBudget: QEMU's CPU time, not the wall clock)
    125   QEMU could not be started
"""
from __future__ import annotations

import argparse
import codecs
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from records import RecordError, parse_lines  # noqa: E402
import host_cores  # noqa: E402
import net_tap  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
KVM_PROBE_CACHE = REPO / "build" / "kvm-probe.json"

EXIT_NO_DONE = 3
EXIT_PANIC = 4
PANIC_GRACE = 2.0
# A guest that burns no CPU (every core halted, waiting for an event that never comes) makes
# no progress to measure: it is stopped after this many times its budget of wall time.
WALL_LIMIT_FACTOR = 3.0
EXIT_TIMEOUT = 124
EXIT_NO_QEMU = 125

# --net: the guest's first server port; server instance i listens on GUEST_PORT_BASE + i.
GUEST_PORT_BASE = 6379
NET_PORTS_MAX = 64
# --net also forwards one host UDP port to this guest UDP port: the app `redis`'s control port,
# which its NIC driver serves (userland/net/control_port.h: the window's marks).
GUEST_CONTROL_PORT = 7000

# arm-imx6: where the boot command line blob is loaded (docs/arm-imx6.md).
ARM_CMDLINE_ADDR = 0x1FF00000

# arm-imx6 through U-Boot: what a person at the board's console would type.
# QEMU's FEC has no MAC address in its fuses, so U-Boot needs one; QEMU's
# user network answers DHCP and serves the boot files over TFTP.
UBOOT_AUTOBOOT = "Hit any key to stop autoboot"
UBOOT_PROMPT = "=> "
UBOOT_COMMANDS = ("setenv ethaddr 52:54:00:12:34:56; "
                  "dhcp ${scriptaddr} boot.scr; source ${scriptaddr}")
IMX_IVT_TAG = 0xD1
# Where tools/ensure_deps.sh unpacks Debian's U-Boot for the Sabre Lite.
UBOOT_IMX = REPO / ".deps/u-boot-imx/usr/lib/u-boot/mx6qsabrelite/u-boot-dtb.imx"


def imx_image_addresses(imx: Path) -> tuple[int, int]:
    """Where an i.MX boot image belongs in memory, and its entry point.

    The image starts with its image vector table: a tag byte, then at byte 4
    the entry point and at byte 20 the table's own address (i.MX6 reference
    manual, "Image Vector Table").  The boot ROM copies the file there; QEMU's
    sabrelite has no boot ROM, so qemu_run does the copy with a loader device.
    """
    head = imx.read_bytes()[:32]
    if len(head) < 32 or head[0] != IMX_IVT_TAG:
        raise SystemExit(f"qemu_run: {imx} is not an i.MX boot image (no image vector table)")
    return int.from_bytes(head[20:24], "little"), int.from_bytes(head[4:8], "little")


class ConsoleScript:
    """Types into the guest's console: each step waits for a text, then sends keys."""

    def __init__(self, steps: list[tuple[str, str]], keyboard) -> None:
        self.steps = list(steps)
        self.keyboard = keyboard
        self.seen = ""

    def feed(self, text: str) -> None:
        self.seen += text
        while self.steps and self.steps[0][0] in self.seen:
            wait_for, keys = self.steps.pop(0)
            self.seen = self.seen.split(wait_for, 1)[1]
            self.keyboard.write(keys.encode())
            self.keyboard.flush()


def uboot_tftp_dir(build_dir: Path, cmdline: str, scratch: Path) -> Path:
    """A TFTP folder with the uImage and boot.scr of a build and the run's cmdline.txt."""
    tftp = scratch / "tftp"
    tftp.mkdir()
    for name in ("uImage", "boot.scr"):
        if not (build_dir / name).is_file():
            raise SystemExit(f"qemu_run: {build_dir / name} is missing: make uimage ARCH=arm-imx6")
        shutil.copy(build_dir / name, tftp / name)
    (tftp / "cmdline.txt").write_text(cmdline)
    return tftp


def record_of(line: str) -> dict | None:
    """The record on a console line, or None (a garbled one from a dying guest too)."""
    try:
        found = parse_lines([line])
    except RecordError:
        return None
    return found[0] if found else None


def kvm_opens() -> bool:
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
    except OSError:
        return False
    os.close(fd)
    return True


def kvm_usable(image: Path, arch: str) -> tuple[bool, str]:
    """Whether KVM can run this kernel with user mode, by a short probe boot.

    /dev/kvm opening is not enough (docs/building.md): the nested KVM on the
    build machines runs a serial-only guest but faults on the first system
    call from user mode.  So boot the hello program under KVM and require a
    clean done record.  The answer is cached per host in build/kvm-probe.json.
    """
    if arch != "x86_64":
        return False, "KVM is only used for x86_64 guests"
    if not kvm_opens():
        return False, "/dev/kvm does not open"
    host = os.uname().nodename
    try:
        cached = json.loads(KVM_PROBE_CACHE.read_text())
        if cached.get("host") == host:
            return cached["usable"], cached["reason"]
    except (OSError, ValueError, KeyError):
        pass
    argv = qemu_argv("x86_64", image, cpus=1, accel="kvm", icount=False,
                     cmdline="app=hello accel=kvm", extra=[])
    usable, reason = False, "the probe boot did not finish"
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", timeout=30)
        done = [r for r in map(record_of, proc.stdout.splitlines())
                if r is not None and "done" in r]
        if done and done[-1].get("status") == 0:
            usable, reason = True, "a probe boot made user-mode system calls under KVM"
        else:
            reason = "a probe boot under KVM did not complete a user-mode system call round trip"
    except subprocess.TimeoutExpired:
        reason = "a probe boot under KVM hung"
    except OSError as err:
        reason = f"QEMU could not start under KVM: {err}"
    KVM_PROBE_CACHE.parent.mkdir(parents=True, exist_ok=True)
    KVM_PROBE_CACHE.write_text(json.dumps({"host": host, "usable": usable, "reason": reason}))
    return usable, reason


def choose_accel(requested: str, image: Path, arch: str) -> tuple[str, str]:
    if requested == "tcg":
        return "tcg", "asked for"
    if requested == "kvm":
        return "kvm", "asked for"
    usable, reason = kvm_usable(image, arch)
    return ("kvm" if usable else "tcg"), reason


def free_host_ports(count: int, kind: int = socket.SOCK_STREAM) -> list[int]:
    """count distinct TCP ports (kind SOCK_DGRAM: UDP ports) on 127.0.0.1 that nothing listens on now.

    Each is bound (port 0: the kernel picks) and all are held until every one is
    chosen, so they differ; they are released just before QEMU binds them, so
    another program could take one in between, and QEMU then fails to start.
    """
    held = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, kind)
            s.bind(("127.0.0.1", 0))
            held.append(s)
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def port_forwards(host_ports: list[int]) -> list[tuple[int, int]]:
    """(host port, guest port) pairs: host_ports[i] forwards to GUEST_PORT_BASE + i."""
    return [(h, GUEST_PORT_BASE + i) for i, h in enumerate(host_ports)]


def served_ports(cmdline: str, cpus: int) -> int:
    """How many guest ports --net forwards by default: those the app serves.

    The app `redis` serves one port per core but the driver's in its default layout,
    layout=percore (one on one core), and one in layout=processes; other apps get one per CPU.
    """
    words = dict(w.split("=", 1) for w in cmdline.split() if "=" in w)
    if words.get("app") != "redis":
        return cpus
    return 1 if words.get("layout") == "processes" else max(1, cpus - 1)


def hostfwd(forwards: list[tuple[int, int]], udp_forwards: list[tuple[int, int]] | None = None) -> str:
    """QEMU user networking's port forwards, TCP then UDP, on 127.0.0.1 only."""
    return ("".join(f",hostfwd=tcp:127.0.0.1:{h}-:{g}" for h, g in forwards)
            + "".join(f",hostfwd=udp:127.0.0.1:{h}-:{g}" for h, g in udp_forwards or []))


def tap_options(device: str) -> str:
    """QEMU's options for a tap device that tools/net_tap.py made and configured."""
    return f"ifname={device},script=no,downscript=no"


def listen_backlog_shim() -> Path | None:
    """The LD_PRELOAD shim of tools/listen_backlog.c, built into build/host/ when it is older.

    QEMU's user network listens on each host port forward with a backlog of 1; under a client
    that opens many connections at once, the host kernel drops their handshakes and the client
    waits tens of seconds for its retransmissions (tools/listen_backlog.c, docs/network.md).
    None, with a note, when it cannot be built: the forwards then work, with that backlog.
    """
    source = REPO / "tools" / "listen_backlog.c"
    shim = REPO / "build" / "host" / "listen_backlog.so"
    if shim.exists() and shim.stat().st_mtime >= source.stat().st_mtime:
        return shim
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("qemu_run: no C compiler for tools/listen_backlog.c: QEMU's port forwards keep "
              "their backlog of 1 (clients opening many connections at once may stall)", file=sys.stderr)
        return None
    shim.parent.mkdir(parents=True, exist_ok=True)
    partial = shim.with_suffix(f".{os.getpid()}.tmp")
    built = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
                            str(partial), str(source), "-ldl"], capture_output=True, text=True)
    if built.returncode != 0:
        print(f"qemu_run: building tools/listen_backlog.c failed, QEMU's port forwards keep their "
              f"backlog of 1:\n{built.stderr}", file=sys.stderr)
        partial.unlink(missing_ok=True)
        return None
    partial.replace(shim)
    return shim


def qemu_argv(arch: str, image: Path, cpus: int, accel: str, icount: bool,
              cmdline: str, extra: list[str], iso: Path | None = None,
              uboot: Path | None = None, gdb: bool = False,
              scratch: Path | None = None,
              forwards: list[tuple[int, int]] | None = None,
              udp_forwards: list[tuple[int, int]] | None = None,
              tap: str | None = None, one_thread: bool = False) -> list[str]:
    """QEMU's command line.  arm-imx6 needs scratch, a folder for the files it hands the guest.

    forwards (host port, guest port) give the guest a NIC on QEMU user networking (slirp)
    with those TCP forwards, and udp_forwards with those UDP ones: x86_64 an e1000, arm-imx6
    the board's own ENET.  forwards None: no NIC.  tap names a tap device (tools/net_tap.py)
    for the NIC instead of slirp; the forwards then only say which guest ports are served.
    one_thread runs every virtual CPU on one host thread, in turns (TCG's thread=single).
    """
    tcg = "tcg,thread=single" if one_thread else "tcg"
    if arch == "x86_64":
        argv = ["qemu-system-x86_64", "-machine", "q35", "-smp", str(cpus), "-m", "512M",
                "-display", "none", "-no-reboot", "-serial", "stdio",
                "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
        if accel == "kvm":
            argv += ["-enable-kvm", "-cpu", "host"]
        else:
            argv += ["-accel", tcg, "-cpu", "max"]
        if iso is not None:
            argv += ["-cdrom", str(iso), "-boot", "d"]
        else:
            argv += ["-kernel", str(image), "-append", cmdline]
        if tap is not None:
            argv += ["-netdev", f"tap,id=n0,{tap_options(tap)}", "-device", "e1000,netdev=n0"]
        elif forwards is not None:
            argv += ["-netdev", "user,id=n0" + hostfwd(forwards, udp_forwards), "-device", "e1000,netdev=n0"]
    elif arch == "arm-imx6":
        argv = ["qemu-system-arm", "-M", "sabrelite", "-smp", str(cpus), "-m", "1G",
                "-display", "none", "-no-reboot", "-serial", "null", "-serial", "stdio",
                "-semihosting-config", "enable=on,target=native", "-accel", tcg]
        if uboot is not None:
            where, entry = imx_image_addresses(uboot)
            argv += ["-device", f"loader,file={uboot},addr={where:#x},force-raw=on",
                     "-device", f"loader,addr={entry:#x},cpu-num=0",
                     "-nic", f"user,tftp={uboot_tftp_dir(image.parent, cmdline, scratch)}"
                     + hostfwd(forwards or [], udp_forwards)]
        else:
            blob = scratch / "cmdline.txt"
            blob.write_bytes(cmdline.encode() + b"\0")
            argv += ["-kernel", str(image),
                     "-device", f"loader,file={blob},addr={ARM_CMDLINE_ADDR:#x},force-raw=on"]
            if tap is not None:
                argv += ["-nic", f"tap,{tap_options(tap)}"]
            elif forwards is not None:
                argv += ["-nic", "user" + hostfwd(forwards, udp_forwards)]
    else:
        raise SystemExit(f"unknown arch {arch}")
    if icount:
        argv += ["-icount", "shift=0"]
    if gdb:
        argv += ["-s", "-S"]
    return argv + extra


class GuestBudget:
    """How long a guest has run, measured by the CPU time the host gave QEMU.

    A wall-clock limit fails a guest on a busy host: QEMU's threads wait for a host core while
    the clock runs on.  The CPU time QEMU used, divided by the host cores its virtual CPUs can
    use at once, advances only while the guest is actually executing, so on an idle host it
    equals the wall time and on a host shared with other work it stretches with the share QEMU
    gets.  Under -icount, or with --one-thread, QEMU runs every virtual CPU on one host thread.
    """

    def __init__(self, pid: int, cpus: int, one_thread: bool) -> None:
        self.stat = Path(f"/proc/{pid}/stat")
        self.parallel = 1 if one_thread else max(1, min(cpus, os.cpu_count() or 1))
        self.tick = os.sysconf("SC_CLK_TCK")

    def seconds(self) -> float:
        """The guest's run time so far (0 once QEMU is gone)."""
        try:
            fields = self.stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0.0
        # utime and stime (fields 14 and 15 of proc(5)) cover every thread of the process.
        return (int(fields[11]) + int(fields[12])) / self.tick / self.parallel


def watch_budget(budget: GuestBudget, limit: float, expired, finished: threading.Event) -> None:
    """Call expired() once the guest has run `limit` seconds, or after WALL_LIMIT_FACTOR times
    that of wall time; return early when finished is set."""
    start = time.monotonic()
    while not finished.wait(0.5):
        if budget.seconds() > limit or time.monotonic() - start > limit * WALL_LIMIT_FACTOR:
            expired()
            return


def host_realtime_ms() -> int:
    """The host's Unix time in whole milliseconds, rounded down, for the guest's realtime_ms=.

    The guest's cycle counter reads 0 when QEMU starts running the machine, after QEMU's own
    start-up (docs/posix.md), which is later than this: rounded down, the guest's clock starts
    behind the host's by that start-up, never ahead of it.
    """
    return time.time_ns() // 1_000_000


def run(args: argparse.Namespace, scratch: Path, tap: str | None = None) -> int:
    image = Path(args.image)
    if args.lock == "none" and args.cpus > 1 and not args.unsafe:
        print("LOCK=none has no kernel lock and is correct only on one core: "
              "use CPUS=1, or UNSAFE=1 for the unsafe multicore baseline", file=sys.stderr)
        return 2
    accel, why = choose_accel(args.accel, image, args.arch)
    if args.icount and accel != "tcg":
        print("ICOUNT=1 needs TCG: using TCG", file=sys.stderr)
        accel, why = "tcg", "-icount needs TCG"
    print(f"qemu_run: accelerator {accel} ({why})", flush=True)
    if args.icount:
        print("qemu_run: -icount shift=0: the cycle counter counts instructions; "
              "figures are instructions, not cycles", flush=True)
    words = [w for w in args.cmdline.split() if not w.startswith(("accel=", "icount="))]
    # The guest has no clock of the day it reads itself: POSIX processes take the host's
    # (docs/posix.md).  Under -icount guest time then runs at one instruction per nanosecond.
    if not any(w.startswith("realtime_ms=") for w in words):
        words.append(f"realtime_ms={host_realtime_ms()}")
    cmdline = " ".join(words + [f"accel={accel}", f"icount={int(args.icount)}"])
    uboot = Path(args.uboot) if args.uboot else None
    if uboot is not None and (args.arch != "arm-imx6" or not uboot.is_file()):
        print(f"qemu_run: --uboot needs arch arm-imx6 and U-Boot's i.MX image ({uboot}): "
              "`make deps` as root unpacks it", file=sys.stderr)
        return EXIT_NO_QEMU
    forwards = udp_forwards = None
    if args.net:
        count = args.net_ports if args.net_ports is not None else served_ports(args.cmdline, args.cpus)
        if not 1 <= count <= NET_PORTS_MAX:
            print(f"qemu_run: --net-ports must be 1..{NET_PORTS_MAX}", file=sys.stderr)
            return 2
        if tap is None:
            address = "127.0.0.1"
            forwards = port_forwards(free_host_ports(count))
            udp_forwards = [(free_host_ports(1, socket.SOCK_DGRAM)[0], GUEST_CONTROL_PORT)]
        else:
            address = net_tap.GUEST_ADDRESS
            forwards = port_forwards([GUEST_PORT_BASE + i for i in range(count)])
            udp_forwards = [(GUEST_CONTROL_PORT, GUEST_CONTROL_PORT)]
            print(f"qemu_run: net: tap device {tap}, the guest at {address}", flush=True)
        for h, g in forwards:
            print(f"qemu_run: net: {address}:{h} -> guest port {g}", flush=True)
        for h, g in udp_forwards:
            print(f"qemu_run: net: udp {address}:{h} -> guest udp port {g}", flush=True)
        net = {"forwards": [{"host": h, "guest": g} for h, g in forwards],
               "udp": [{"host": h, "guest": g} for h, g in udp_forwards]}
        if tap is not None:
            net.update(address=address, tap=tap)
        print("@@ " + json.dumps({"net": net}), flush=True)
    argv = qemu_argv(args.arch, image, args.cpus, accel, args.icount, cmdline,
                     args.extra or [], iso=Path(args.iso) if args.iso else None,
                     uboot=uboot, gdb=args.gdb, scratch=scratch, forwards=forwards,
                     udp_forwards=udp_forwards, tap=tap, one_thread=args.one_thread)
    if shutil.which(argv[0]) is None:
        print(f"qemu_run: {argv[0]} is not installed (run `make deps`)", file=sys.stderr)
        return EXIT_NO_QEMU
    env = None
    if forwards and tap is None:
        shim = listen_backlog_shim()
        if shim is not None:
            env = dict(os.environ)
            env["LD_PRELOAD"] = " ".join(p for p in (str(shim), env.get("LD_PRELOAD", "")) if p)
            print(f"qemu_run: net: port forwards listen with a full backlog ({shim.name})", flush=True)
    print("qemu_run: " + " ".join(argv), flush=True)
    log = open(args.log, "w") if args.log else None
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if uboot else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env)
    except OSError as err:
        print(f"qemu_run: cannot start QEMU: {err}", file=sys.stderr)
        return EXIT_NO_QEMU

    done_status: list[int] = []
    timed_out = threading.Event()
    panicked = threading.Event()

    def stop_qemu() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def on_timeout() -> None:
        timed_out.set()
        stop_qemu()

    # QEMU runs in a session of its own (so that ^C at a terminal reaches
    # only this script): whoever stops this script stops QEMU through it.
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop_qemu())

    # A panicked kernel halts its cores and never prints a done record.
    panic_timer = threading.Timer(PANIC_GRACE, stop_qemu)

    finished = threading.Event()
    if args.timeout > 0:
        threading.Thread(target=watch_budget, daemon=True,
                         args=(GuestBudget(proc.pid, args.cpus, args.icount or args.one_thread), args.timeout,
                               on_timeout, finished)).start()
    start = time.monotonic()
    assert proc.stdout is not None
    # U-Boot's prompts end without a newline, so the console is read in
    # chunks: the script sees text as it comes, the records whole lines.
    script = ConsoleScript([(UBOOT_AUTOBOOT, "\r"), (UBOOT_PROMPT, UBOOT_COMMANDS + "\r")],
                           proc.stdin) if uboot else None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def take_line(line: str) -> None:
        line = line.rstrip("\r")
        print(line, flush=True)
        if log:
            log.write(line + "\n")
        record = record_of(line)
        if record is not None and record.get("done") is True:
            done_status.append(int(record.get("status", 1)))
        if record is not None and "panic" in record and not panicked.is_set():
            panicked.set()
            panic_timer.start()

    partial = ""
    for chunk in iter(lambda: os.read(proc.stdout.fileno(), 4096), b""):
        text = decoder.decode(chunk)
        if script:
            script.feed(text)
        *lines, partial = (partial + text).split("\n")
        for line in lines:
            take_line(line)
    if partial:
        take_line(partial)
    qemu_status = proc.wait()
    finished.set()
    panic_timer.cancel()
    elapsed = time.monotonic() - start
    if log:
        log.close()
    if panicked.is_set():
        print(f"qemu_run: PANIC: the kernel panicked; QEMU was stopped after {elapsed:.1f} s", flush=True)
        return EXIT_PANIC
    if timed_out.is_set():
        print(f"qemu_run: TIMEOUT: the guest did not finish within {args.timeout} s of its run time "
              f"({elapsed:.0f} s of wall time); QEMU was stopped", flush=True)
        return EXIT_TIMEOUT
    if not done_status:
        print(f"qemu_run: QEMU ended (exit {qemu_status}) after {elapsed:.1f} s "
              "without a done record: the guest failed", flush=True)
        return EXIT_NO_DONE
    print(f"qemu_run: guest status {done_status[-1]} after {elapsed:.1f} s", flush=True)
    return done_status[-1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", default="x86_64", choices=["x86_64", "arm-imx6"])
    p.add_argument("--lock", default="bkl")
    p.add_argument("--image", required=True, help="the kernel ELF")
    p.add_argument("--iso", help="boot this GRUB image from a CD instead of -kernel")
    p.add_argument("--uboot", help="arm-imx6: boot U-Boot from this i.MX image, which loads "
                   "the uImage and boot.scr beside --image over TFTP")
    p.add_argument("--cpus", type=int, default=4)
    p.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"])
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds the guest may run, in QEMU's CPU time per usable host core "
                        "(GuestBudget); 0: no limit")
    p.add_argument("--icount", action="store_true")
    p.add_argument("--one-thread", action="store_true",
                   help="TCG: run every virtual CPU on one host thread, in turns, as -icount does, "
                        "but on the host's clock (QEMU's -accel tcg,thread=single)")
    p.add_argument("--unsafe", action="store_true")
    p.add_argument("--cmdline", default="app=hello")
    p.add_argument("--log", help="also write the console to this file")
    p.add_argument("--gdb", action="store_true", help="wait for GDB on :1234")
    p.add_argument("--net", action="store_true",
                   help="give the guest a NIC on QEMU user networking (x86_64: e1000; arm-imx6: "
                   "the ENET), forwarding free host ports on 127.0.0.1 to guest ports 6379, 6380, ... "
                   "and one to guest UDP port 7000 (the app redis's control port)")
    p.add_argument("--net-ports", type=int, default=None,
                   help="how many ports --net forwards (default: those the app serves: redis 1, "
                        "or one per CPU but the driver's with layout=percore; other apps one per CPU)")
    p.add_argument("--tap", action="store_true",
                   help="with --net: the NIC on a tap device instead (tools/net_tap.py; needs root): "
                        "the host reaches the guest at 10.0.2.15 on the guest's own ports, through "
                        "its own TCP stack, which keeps the order between connections")
    p.add_argument("extra", nargs="*", help="extra QEMU arguments (after --)")
    args = p.parse_args()
    if args.tap:
        why = net_tap.unavailable()
        if why or not args.net or args.uboot:
            print(f"qemu_run: --tap: {why or 'needs --net, and not --uboot'}", file=sys.stderr)
            return EXIT_NO_QEMU if why else 2
    with tempfile.TemporaryDirectory(prefix="qemu_run-") as scratch, \
            host_cores.held(host_cores.needs_every_core(args.cpus, args.icount or args.one_thread)), \
            contextlib.ExitStack() as stack:
        tap = stack.enter_context(net_tap.tap_device()) if args.tap else None
        return run(args, Path(scratch), tap)


if __name__ == "__main__":
    sys.exit(main())
