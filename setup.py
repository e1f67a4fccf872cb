"""pip install . (offline, with Debian's setuptools: pip install --no-build-isolation .):
builds the tdispatch Python module with CMake (the library linked in statically, Release,
no tests, examples or tools) and installs it with its type stub. The CMake build of the
whole tree makes the same module under build/python (README, "Python")."""
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        jobs = os.environ.get("TD_JOBS", "2")
        subprocess.check_call(["cmake", "-S", HERE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                               "-DBUILD_SHARED_LIBS=OFF", "-DTD_PYTHON=ON", "-DTD_BUILD_TESTS=OFF",
                               "-DTD_BUILD_EXAMPLES=OFF", "-DTD_BUILD_BENCH=OFF", "-DTD_BUILD_TOOLS=OFF",
                               "-DTD_INSTALL=OFF"])
        subprocess.check_call(["cmake", "--build", build, "--target", "tdispatch_python", "-j", jobs])
        built = [f for f in os.listdir(os.path.join(build, "python")) if f.startswith("tdispatch") and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError("the CMake build made no single tdispatch module: %r" % built)
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(build, "python", built[0]), dest)
        shutil.copyfile(os.path.join(build, "python", "tdispatch.pyi"),
                        os.path.join(os.path.dirname(dest), "tdispatch.pyi"))


setup(name="tdispatch", version="1.0.0",
      description="A tensor library whose dispatch layer, and Python binding, are generated from specs",
      ext_modules=[Extension("tdispatch", sources=[])], cmdclass={"build_ext": CMakeBuild}, zip_safe=False)
