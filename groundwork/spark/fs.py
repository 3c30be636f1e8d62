"""Paths on any file system Spark reads (local, hdfs://, s3a://), through Hadoop's FileSystem
API in the driver's JVM: what a job needs besides Spark's readers and writers."""

from __future__ import annotations

import datetime as dt


class Store:
    """One folder (the archive or OUT) on its Hadoop file system."""

    def __init__(self, spark, path: str):
        jvm = spark._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        conf = spark._jsc.hadoopConfiguration()
        jpath = self._Path(str(path))
        self.fs = jpath.getFileSystem(conf)
        self.root = self.fs.makeQualified(jpath).toString().rstrip("/")

    def path(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    def exists(self, *parts: str) -> bool:
        return bool(self.fs.exists(self._Path(self.path(*parts))))

    def is_dir(self, *parts: str) -> bool:
        p = self._Path(self.path(*parts))
        return bool(self.fs.exists(p)) and bool(self.fs.getFileStatus(p).isDirectory())

    def status(self, path: str):
        """(length, modification time as a naive UTC datetime) of a file given by its full path,
        or None when it is gone."""
        p = self._Path(path)
        if not self.fs.exists(p):
            return None
        st = self.fs.getFileStatus(p)
        return st.getLen(), dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=st.getModificationTime())

    def delete(self, *parts: str) -> None:
        p = self._Path(self.path(*parts))
        if self.fs.exists(p):
            self.fs.delete(p, True)

    def children(self, *parts: str) -> list[str]:
        """Names in a folder (none when it does not exist)."""
        p = self._Path(self.path(*parts))
        if not self.fs.exists(p):
            return []
        return [status.getPath().getName() for status in self.fs.listStatus(p)]

    def move(self, source: tuple[str, ...], target: tuple[str, ...]) -> None:
        """Replace ``target`` by ``source`` (a rename; a copy on object stores)."""
        self.delete(*target)
        self.fs.mkdirs(self._Path(self.path(*target[:-1])))
        if not self.fs.rename(self._Path(self.path(*source)), self._Path(self.path(*target))):
            raise OSError(f"cannot move {self.path(*source)} to {self.path(*target)}")


def glob_escaped(path: str) -> str:
    """A path Hadoop does not read as a glob pattern."""
    return "".join("\\" + c if c in "[]{}*?\\" else c for c in path)
