"""Batch input for roost: Parquet, Arrow IPC and Feather into roost-load.

``roost-build`` (``roost.batch._build``) is the command; the stream it
writes (docs/format/column_stream.md) is ``ColumnStreamWriter``, usable on
any Arrow record batches (a Spark job's ``mapInArrow`` batches, say).
Needs pyarrow: ``pip install 'roost-client[batch]'``.
"""

from roost.batch._stream import (
    ColumnStreamWriter,
    UnsupportedColumnError,
    write_column_stream,
)

__all__ = ["ColumnStreamWriter", "UnsupportedColumnError", "write_column_stream"]
