#!/usr/bin/env python3
"""Build the Linux baseline's guest (docs/linux-baseline.md) from Debian packages alone.

For one port, into build/linux-guest/<arch>/:
  vmlinuz      Debian's kernel: linux-image-amd64 (x86_64), linux-image-armmp:armhf (arm-imx6)
  board.dtb    arm-imx6 only: the kernel package's imx6q-sabrelite.dtb
  initrd.gz    a gzipped newc cpio: busybox-static, redis-server (its binary is redis-tools'
               redis-check-rdb, which runs as the server under that name) with every shared
               library it needs, the NIC driver's modules and their dependencies, and
               tools/linux_init.sh as /init
  manifest.json  the packages and versions it was made of, the kernel release, the modules

Packages are fetched with `apt-get download` into .deps/linux-baseline/<arch>/ and unpacked
with dpkg-deb; nothing else is fetched.  The libraries are the closure of the packages'
`Depends` on library packages; every DT_NEEDED of every binary put in the image is then
checked against what was unpacked, so a missing one is an error that names it.  The image is
rebuilt only when this file, the init script or a package changed.

    python3 tools/linux_image.py --arch x86_64        # prints the build folder
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEPS = REPO / ".deps" / "linux-baseline"
INIT_SCRIPT = REPO / "tools" / "linux_init.sh"


@dataclass(frozen=True)
class Port:
    """What one port's guest is made of."""
    deb_arch: str
    kernel_package: str          # the metapackage that depends on the current kernel
    loader: str                  # the dynamic loader, as programs name it (PT_INTERP)
    nic_modules: tuple           # the NIC's driver and what it waits for, modules in Debian's kernel
    dtb: str | None              # the board's device tree, from the kernel package
    console: str                 # the board's console as Linux names it (QEMU's -serial stdio)
    smp_under_icount: bool       # whether Linux runs on more than one CPU under -icount here


PORTS = {
    "x86_64": Port("amd64", "linux-image-amd64", "/lib64/ld-linux-x86-64.so.2", ("e1000",), None, "ttyS0",
                   True),
    # The ENET's PHY reset line is on a GPIO bank, whose driver is a module too.  Its waits for
    # another core spin without a yield, which QEMU 7.2's -icount never ends
    # (docs/linux-baseline.md, "More than one CPU under -icount").
    "arm-imx6": Port("armhf", "linux-image-armmp", "/lib/ld-linux-armhf.so.3", ("gpio-mxc", "fec"),
                     "imx6q-sabrelite.dtb", "ttymxc1,115200", False),
}
# The packages besides the kernel: the shell and its tools, and the server with its libraries.
USER_PACKAGES = ("busybox-static", "redis-tools")
SERVER_BINARY = "usr/bin/redis-check-rdb"


class ImageError(Exception):
    pass


def package_name(name: str, port: Port) -> str:
    """apt's name of a package of the port's architecture."""
    return name if port.deb_arch == "amd64" else f"{name}:{port.deb_arch}"


def download(names: list[str], port: Port, into: Path) -> dict[str, Path]:
    """apt-get download each package (unless a .deb of it is there); {name: its .deb}."""
    into.mkdir(parents=True, exist_ok=True)
    found = {}
    for name in names:
        pattern = f"{name}_*_{port.deb_arch}.deb"
        have = sorted(into.glob(pattern)) + sorted(into.glob(f"{name}_*_all.deb"))
        if not have:
            done = subprocess.run(["apt-get", "download", package_name(name, port)], cwd=into,
                                  capture_output=True, text=True)
            have = sorted(into.glob(pattern)) + sorted(into.glob(f"{name}_*_all.deb"))
            if done.returncode != 0 or not have:
                raise ImageError(f"the Debian package {package_name(name, port)} could not be "
                                 f"downloaded (apt-get download): {done.stderr.strip()}")
        found[name] = have[-1]
    return found


def control_field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True,
                          check=True).stdout.strip()


def depends(deb: Path) -> list[str]:
    """The package names a .deb depends on (Pre-Depends and Depends, first of each alternative)."""
    names = []
    for field in ("Pre-Depends", "Depends"):
        for clause in control_field(deb, field).split(","):
            first = clause.split("|")[0].strip()
            if first:
                names.append(re.split(r"[\s(:]", first, maxsplit=1)[0])
    return names


def library_closure(roots: list[str], port: Port, into: Path) -> dict[str, Path]:
    """The roots and every library package (lib*) they depend on, downloaded."""
    debs: dict[str, Path] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in debs:
            continue
        debs.update(download([name], port, into))
        pending += [d for d in depends(debs[name]) if d.startswith("lib") and d not in debs]
    return debs


def unpack(debs: dict[str, Path], into: Path) -> None:
    """dpkg-deb -x every package into one tree, from scratch."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    for deb in debs.values():
        subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)


def needed(binary: Path) -> list[str]:
    """The DT_NEEDED sonames of an ELF file."""
    out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def library_dirs(root: Path) -> list[Path]:
    """Where the dynamic loader looks: /lib, /usr/lib and their multiarch folders."""
    dirs = []
    for top in (root / "lib", root / "usr" / "lib"):
        dirs += [top, *sorted(top.glob("*-linux-*"))]
    return [d for d in dirs if d.is_dir()]


def find_library(root: Path, soname: str) -> Path | None:
    for d in library_dirs(root):
        if (d / soname).exists():
            return d / soname
    return None


def shared_libraries(root: Path, binary: Path) -> dict[str, Path]:
    """{path in the image: path in the unpacked tree} of every library binary loads."""
    found: dict[str, Path] = {}
    pending = needed(binary)
    while pending:
        soname = pending.pop()
        if any(Path(p).name == soname for p in found):
            continue
        lib = find_library(root, soname)
        if lib is None:
            raise ImageError(f"{binary.name} needs {soname}, which none of the unpacked Debian "
                             f"packages holds")
        found["/" + str(lib.relative_to(root))] = lib.resolve()
        pending += needed(lib.resolve())
    return found


def module_dependencies(modules_root: Path, names: tuple) -> list[Path]:
    """The modules `names` and the modules they need, those first (the order insmod needs).
    Debian's package has no modules.dep (depmod runs at install), so the `depends=` of
    each module's .modinfo gives them."""
    index = {p.name[:-3].replace("-", "_"): p for p in modules_root.rglob("*.ko")}
    order: list[Path] = []

    def visit(mod: str) -> None:
        key = mod.replace("-", "_")
        if key not in index:
            raise ImageError(f"the kernel package has no module {mod}")
        path = index[key]
        if path in order:
            return
        info = re.search(rb"depends=([^\0]*)\0", path.read_bytes())
        for dep in (info.group(1).decode().split(",") if info else []):
            if dep:
                visit(dep)
        order.append(path)

    for name in names:
        visit(name)
    return order


class Cpio:
    """A newc ("070701") cpio archive, the format the kernel unpacks an initramfs from."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.inode = 1
        self.dirs: set[str] = set()

    def _entry(self, name: str, mode: int, body: bytes = b"") -> None:
        fields = [self.inode, mode, 0, 0, 1, 0, len(body), 0, 0, 0, 0, len(name) + 1, 0]
        self.inode += 1
        self.data += b"070701" + b"".join(b"%08X" % f for f in fields)
        self.data += name.encode() + b"\0"
        self.data += b"\0" * (-len(self.data) % 4)
        self.data += body
        self.data += b"\0" * (-len(self.data) % 4)

    def directory(self, path: str) -> None:
        path = path.strip("/")
        if path in ("", ".") or path in self.dirs:
            return
        self.directory(str(Path(path).parent))
        self.dirs.add(path)
        self._entry(path, 0o040755)

    def file(self, path: str, body: bytes, mode: int = 0o755) -> None:
        path = path.strip("/")
        self.directory(str(Path(path).parent))
        self._entry(path, 0o100000 | mode, body)

    def symlink(self, path: str, target: str) -> None:
        path = path.strip("/")
        self.directory(str(Path(path).parent))
        self._entry(path, 0o120777, target.encode())

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return bytes(self.data)


def kernel_files(root: Path) -> tuple[Path, str]:
    """The unpacked kernel package's vmlinuz and its release (the modules folder's name)."""
    images = sorted((root / "boot").glob("vmlinuz-*"))
    if not images:
        raise ImageError("the kernel package holds no /boot/vmlinuz-*")
    return images[-1], images[-1].name[len("vmlinuz-"):]


def sources_digest(debs: list[Path]) -> str:
    h = hashlib.sha256()
    for path in [Path(__file__), INIT_SCRIPT]:
        h.update(path.read_bytes())
    for deb in sorted(debs):
        h.update(deb.name.encode())
    return h.hexdigest()


def build(arch: str) -> Path:
    """Make the port's guest (when its sources changed) and return its build folder."""
    port = PORTS[arch]
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise ImageError("the Linux guest is made from Debian packages: apt-get and dpkg-deb are needed")
    store = DEPS / arch
    meta = download([port.kernel_package], port, store / "debs")[port.kernel_package]
    kernel_package = next((d for d in depends(meta) if d.startswith("linux-image-")), None)
    if kernel_package is None:
        raise ImageError(f"{port.kernel_package} names no linux-image-* package")
    kernel_deb = download([kernel_package], port, store / "debs")[kernel_package]
    user_debs = library_closure(list(USER_PACKAGES), port, store / "debs")
    out = REPO / "build" / "linux-guest" / arch
    digest = sources_digest([kernel_deb, *user_debs.values()])
    manifest_path = out / "manifest.json"
    if manifest_path.exists() and json.loads(manifest_path.read_text()).get("digest") == digest:
        return out

    unpack({kernel_package: kernel_deb}, store / "kernel")
    unpack(user_debs, store / "user")
    vmlinuz, release = kernel_files(store / "kernel")
    modules = module_dependencies(store / "kernel" / "lib" / "modules" / release, port.nic_modules)
    server = store / "user" / SERVER_BINARY
    busybox = store / "user" / "bin" / "busybox"
    for path, package in ((server, "redis-tools"), (busybox, "busybox-static")):
        if not path.is_file():
            raise ImageError(f"the Debian package {package} holds no {path.name}")
    loader = store / "user" / port.loader.lstrip("/")
    if not loader.exists():
        raise ImageError(f"the Debian package libc6 ({port.deb_arch}) holds no {port.loader}")

    image = Cpio()
    image.file("init", INIT_SCRIPT.read_bytes())
    image.file("bin/busybox", busybox.read_bytes())
    image.symlink("bin/sh", "busybox")
    image.file("bin/redis-server", server.read_bytes())
    # The loader is also a library libc names, maybe by another path: one entry each, executable.
    libraries = shared_libraries(store / "user", server)
    libraries[port.loader] = loader.resolve()
    for inside, lib in sorted(libraries.items()):
        image.file(inside, lib.read_bytes())
    for mod in modules:
        image.file(f"lib/modules/{mod.name}", mod.read_bytes(), 0o644)
    image.file("etc/modules", "".join(f"/lib/modules/{m.name}\n" for m in modules).encode(), 0o644)
    for d in ("dev", "proc", "sys", "tmp"):
        image.directory(d)

    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(vmlinuz, out / "vmlinuz")
    if port.dtb:
        dtbs = sorted((store / "kernel").glob(f"usr/lib/linux-image-*/{port.dtb}"))
        if not dtbs:
            raise ImageError(f"the Debian package {kernel_package} holds no {port.dtb}")
        shutil.copyfile(dtbs[-1], out / "board.dtb")
    (out / "initrd.gz").write_bytes(gzip.compress(image.finish(), compresslevel=6))
    versions = {name: control_field(deb, "Version")
                for name, deb in [(kernel_package, kernel_deb), *user_debs.items()]}
    redis_version = versions["redis-tools"].split(":")[-1].split("-")[0]
    manifest_path.write_text(json.dumps({
        "arch": arch, "kernel_release": release, "packages": versions,
        "server": f"redis-server {redis_version} (Debian)",
        "modules": [m.name for m in modules], "digest": digest}, indent=1) + "\n")
    return out


def boot_command(arch: str, folder: Path, cpus: int, icount: bool, timeout: float,
                 log: Path | None = None) -> list[str]:
    """tools/qemu_run.py's command that boots the guest in folder on the kernel's QEMU machine,
    with its NIC and a forwarded port per core plus the marks port.  qemu_run hands an ARM
    guest its command line in memory, which Linux does not read: -append gives it too."""
    port = PORTS[arch]
    # One core at boot, the rest brought online by /init (docs/linux-baseline.md).
    cmdline = f"console={port.console} quiet panic=-1 maxcpus=1"
    cmd = [sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", arch, "--lock", "linux",
           "--image", str(folder / "vmlinuz"), "--cpus", str(cpus), "--accel", "tcg",
           "--timeout", f"{timeout:g}", "--cmdline", cmdline, "--net", "--net-ports", str(cpus + 1)]
    if icount:
        cmd.append("--icount")
    if log is not None:
        cmd += ["--log", str(log)]
    cmd += ["--", "-initrd", str(folder / "initrd.gz")]
    if port.dtb:
        cmd += ["-dtb", str(folder / "board.dtb"), "-append", cmdline]
    return cmd


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", choices=sorted(PORTS), default="x86_64")
    args = p.parse_args(argv)
    try:
        print(build(args.arch))
    except ImageError as err:
        print(f"linux_image: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
