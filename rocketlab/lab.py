"""``rocketlab lab``: JupyterLab on the labs directory, ready to use as root and on a headless machine.

The notebook directory is ``--dir``, else ``labs/`` of the workspace the current directory is in
(``rocketlab init DIR`` lays one out), else the checkout's ``labs/`` (a clone), else ``./labs``; never the
installed package's copy. Jupyter's config, runtime, data, settings and workspaces go to ``.jupyter/``
beside that directory (the workspace's, or the repo's, gitignored), so nothing lands in ``~``. The launcher checks the port
first (Jupyter would silently move to another one), switches off Lab's news toast through
``overrides.json``, prints the URL with its token and then replaces itself with the Jupyter server
(same PID, so stopping it is one ``kill``).
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import json
import os
import secrets
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from rocketlab import i18n
from rocketlab.errors import RocketlabError
from rocketlab.i18n import _
from rocketlab.workspace import home

DEFAULT_PORT = 8888
DEFAULT_IP = "127.0.0.1"
NOTIFICATION_PLUGIN = "@jupyterlab/apputils-extension:notification"
NO_NEWS = {"checkForUpdates": False, "fetchNews": "false"}
TRANSLATION_PLUGIN = ("@jupyterlab", "translation-extension", "plugin")
"""JupyterLab's language setting: ``<settings dir>/@jupyterlab/translation-extension/plugin.jupyterlab-settings``."""
LANGUAGE_PACKS = {"zh-CN": "jupyterlab_language_pack_zh_CN"}
"""The language pack (a dependency of the kit) that makes JupyterLab speak each language but English."""


@dataclass(frozen=True)
class LabLaunch:
    """What ``rocketlab lab`` runs: the command line, its environment and the URL to open."""

    argv: list[str]
    env: dict[str, str]
    url: str
    labs_dir: Path
    state_dir: Path


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``lab`` subcommand; its handler is ``args.func(args) -> int``."""
    parser = subparsers.add_parser(
        "lab", help=_("JupyterLab on labs/"),
        description=_("Start JupyterLab on the labs directory and print the URL (with its token) to open."))
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=_("port (default {port})").format(port=DEFAULT_PORT))
    parser.add_argument("--ip", default=DEFAULT_IP, help=_("address to listen on (default {ip})").format(ip=DEFAULT_IP))
    parser.add_argument("--token", default=None, help=_("access token (default: a random one)"))
    parser.add_argument("--no-browser", action="store_true", help=_("do not try to open a web browser"))
    parser.add_argument("--dir", default=None,
                        help=_("notebook directory (default: labs/ of the workspace or checkout you are in)"))
    parser.set_defaults(func=run_lab)
    return parser


def run_lab(args: argparse.Namespace) -> int:
    """Handler of ``rocketlab lab``: checks, prints the URL, then execs JupyterLab (does not return)."""
    launch = prepare(port=args.port, ip=args.ip, token=args.token, open_browser=not args.no_browser,
                     labs_dir=args.dir)
    print("rocketlab lab: " + _("serving {labs} (Jupyter state in {state})").format(
        labs=launch.labs_dir, state=launch.state_dir))
    print("rocketlab lab: " + _("open {url}").format(url=launch.url), flush=True)
    sys.stderr.flush()
    os.execve(launch.argv[0], launch.argv, launch.env)
    return 0  # not reached: execve replaces the process


def prepare(
    *, port: int = DEFAULT_PORT, ip: str = DEFAULT_IP, token: str | None = None, open_browser: bool = False,
    labs_dir: str | Path | None = None,
) -> LabLaunch:
    """Check the arguments and the port, create ``.jupyter/`` and overrides.json; return the launch."""
    if not 1 <= port <= 65535:
        raise RocketlabError(_("--port must be between 1 and 65535, got {port}").format(port=port))
    if token is None:
        token = secrets.token_hex(24)
    if not token or any(c.isspace() for c in token):
        raise RocketlabError("--token must be non-empty and contain no spaces")
    labs = find_labs_dir(labs_dir)
    check_port_free(ip, port)
    state = labs.parent / ".jupyter"
    env = jupyter_env(state)
    for key in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "JUPYTERLAB_SETTINGS_DIR",
                "JUPYTERLAB_WORKSPACES_DIR"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    write_no_news_overrides(lab_app_dir(env) / "settings")
    write_language_setting(Path(env["JUPYTERLAB_SETTINGS_DIR"]), i18n.language())
    argv = [
        sys.executable, "-m", "jupyterlab",
        f"--ServerApp.root_dir={labs}",
        f"--ServerApp.ip={ip}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.open_browser={open_browser}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    return LabLaunch(argv=argv, env=env, url=lab_url(ip, port, token), labs_dir=labs, state_dir=state)


def find_labs_dir(explicit: str | Path | None = None) -> Path:
    """``explicit`` (must be a directory), else ``labs/`` of the workspace or checkout, else ``./labs``."""
    if explicit is not None:
        path = Path(explicit).expanduser().resolve()
        if not path.is_dir():
            raise RocketlabError((_("--dir {path}: not a directory") if path.exists() else _("--dir {path}: no such "
                                                                                       "directory")).format(path=explicit))
        return path
    where = home()
    candidates = ([where / "labs"] if where is not None else []) + [Path.cwd() / "labs"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    raise RocketlabError(_("no labs here ({cwd} is not in a rocketlab workspace): create one with `rocketlab init "
                           "DIR`, then cd DIR and run `rocketlab lab` (or pass --dir)").format(cwd=Path.cwd()))


def check_port_free(ip: str, port: int) -> None:
    """Raise RocketlabError in one line if nothing can listen on ``ip:port`` (in use, bad address)."""
    try:
        infos = socket.getaddrinfo(ip, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise RocketlabError(_("--ip {ip}: not an address this machine knows ({why})").format(ip=ip, why=e.strerror)) from None
    family, kind, proto, _canonname, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Jupyter (tornado) does
        try:
            sock.bind(address)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise RocketlabError(
                    f"port {port} on {ip} is already in use (another Jupyter?); choose another with --port"
                ) from None
            raise RocketlabError(_("cannot listen on {ip}:{port}: {why}").format(ip=ip, port=port, why=e.strerror)) from None


def jupyter_env(state_dir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: ``base`` (default os.environ) with Jupyter's dirs inside ``state_dir``."""
    env = dict(os.environ if base is None else base)
    env.update({
        "JUPYTER_CONFIG_DIR": str(state_dir / "config"),
        "JUPYTER_RUNTIME_DIR": str(state_dir / "runtime"),
        "JUPYTER_DATA_DIR": str(state_dir / "data"),
        "JUPYTERLAB_SETTINGS_DIR": str(state_dir / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(state_dir / "workspaces"),
    })
    env.setdefault("PYSPARK_PYTHON", sys.executable)  # notebooks' Spark workers use this interpreter
    return env


def lab_app_dir(env: dict[str, str] | None = None) -> Path:
    """JupyterLab's application directory (``$JUPYTERLAB_DIR`` or ``<prefix>/share/jupyter/lab``)."""
    env = os.environ if env is None else env
    return Path(env.get("JUPYTERLAB_DIR") or Path(sys.prefix) / "share" / "jupyter" / "lab").resolve()


def write_no_news_overrides(settings_dir: Path) -> bool:
    """Merge "no update checks, no news" into ``settings_dir/overrides.json``; True if it is in place.

    The news toast would cover notebooks (and screenshots). Other overrides in the file are kept. A file
    that cannot be read or written is left alone with a warning on stderr: the toast is only cosmetic.
    """
    path = settings_dir / "overrides.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        print("rocketlab lab: " + _("warning: leaving {path} alone ({why})").format(path=path, why=e), file=sys.stderr)
        return False
    plugin = data.get(NOTIFICATION_PLUGIN)
    plugin = dict(plugin) if isinstance(plugin, dict) else {}
    if all(plugin.get(k) == v for k, v in NO_NEWS.items()):
        return True
    data[NOTIFICATION_PLUGIN] = {**plugin, **NO_NEWS}
    try:
        settings_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as e:
        print("rocketlab lab: " + _("warning: cannot write {path} ({why}); Lab may show a news toast").format(
            path=path, why=e.strerror), file=sys.stderr)
        return False
    return True


def jupyterlab_locale(lang: str) -> str:
    """JupyterLab's name for ``lang`` (``zh_CN``; English is ``en``)."""
    return i18n.GETTEXT_NAMES.get(lang, "en")


def write_language_setting(settings_dir: Path, lang: str) -> bool:
    """Set JupyterLab's language (the translation extension's ``locale``) in ``settings_dir`` to ``lang``'s;
    True if it is in place.

    Written at every start, so Lab speaks the workspace's language (``rocketlab init --lang``,
    ``ROCKETLAB_LANG``, the locale); the file's other settings are kept. A file that cannot be read (Lab
    writes JSON5; one with comments is left alone) or written gets a warning on stderr and is left as it is.
    """
    path = settings_dir.joinpath(*TRANSLATION_PLUGIN[:2], TRANSLATION_PLUGIN[2] + ".jupyterlab-settings")
    locale = jupyterlab_locale(lang)
    if lang in LANGUAGE_PACKS and importlib.util.find_spec(LANGUAGE_PACKS[lang]) is None:
        print("rocketlab lab: " + _("warning: JupyterLab's language pack for {lang} is not installed; "
                                     "Lab stays in English (pip install jupyterlab-language-pack-zh-CN)").format(
            lang=lang), file=sys.stderr)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        print("rocketlab lab: " + _("warning: leaving {path} alone ({why})").format(path=path, why=e),
              file=sys.stderr)
        return False
    if data.get("locale") == locale:
        return True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**data, "locale": locale}, indent=2) + "\n", encoding="utf-8")
    except OSError as e:
        print("rocketlab lab: " + _("warning: cannot write {path} ({why})").format(path=path, why=e.strerror),
              file=sys.stderr)
        return False
    return True


def lab_url(ip: str, port: int, token: str) -> str:
    """The URL to open: ``http://IP:PORT/lab?token=TOKEN`` (wildcard addresses shown as 127.0.0.1)."""
    host = "127.0.0.1" if ip in ("", "0.0.0.0") else ("::1" if ip == "::" else ip)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/lab?token={quote(token, safe='')}"
