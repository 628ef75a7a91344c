"""Build hook (the rest of the metadata is in pyproject.toml): the wheel carries the kit's labs, exercises,
sample runs and benchmarks under ``rocketlab/_kit/`` (see rocketlab/kitfiles.py), so that an installed
kit can lay out a learner's workspace (``rocketlab init DIR``) without a checkout."""

import importlib.util
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("rocketlab_kitfiles", ROOT / "rocketlab" / "kitfiles.py")
kitfiles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kitfiles)


class BuildPyWithKit(build_py):
    """``build_py`` plus a copy of the kit's files into ``rocketlab/_kit/`` (not for editable installs:
    those read the checkout itself)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        files = kitfiles.kit_files(ROOT)
        if not any(f.startswith("labs/") for f in files):
            raise SystemExit("setup.py: no labs/ beside setup.py: the wheel would have no labs")
        target = Path(self.build_lib) / "rocketlab" / kitfiles.KIT_PACKAGE_DIR
        if target.exists():
            shutil.rmtree(target)
        for rel in files:
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, dest)


setup(cmdclass={"build_py": BuildPyWithKit})
