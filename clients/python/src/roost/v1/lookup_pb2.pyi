from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetRequest(_message.Message):
    __slots__ = ["fields", "key", "table", "version"]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    fields: _containers.RepeatedScalarFieldContainer[str]
    key: bytes
    table: str
    version: str
    def __init__(self, table: _Optional[str] = ..., key: _Optional[bytes] = ..., version: _Optional[str] = ..., fields: _Optional[_Iterable[str]] = ...) -> None: ...

class GetResponse(_message.Message):
    __slots__ = ["found", "value", "version", "withdrawn_through"]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WITHDRAWN_THROUGH_FIELD_NUMBER: _ClassVar[int]
    found: bool
    value: bytes
    version: str
    withdrawn_through: str
    def __init__(self, found: bool = ..., value: _Optional[bytes] = ..., version: _Optional[str] = ..., withdrawn_through: _Optional[str] = ...) -> None: ...

class KeyValue(_message.Message):
    __slots__ = ["key", "value"]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: bytes
    value: bytes
    def __init__(self, key: _Optional[bytes] = ..., value: _Optional[bytes] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ["tables"]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedCompositeFieldContainer[TableInfo]
    def __init__(self, tables: _Optional[_Iterable[_Union[TableInfo, _Mapping]]] = ...) -> None: ...

class MultiGetRequest(_message.Message):
    __slots__ = ["fields", "keys", "packed", "score", "table", "version"]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    PACKED_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    fields: _containers.RepeatedScalarFieldContainer[str]
    keys: _containers.RepeatedScalarFieldContainer[bytes]
    packed: bool
    score: Score
    table: str
    version: str
    def __init__(self, table: _Optional[str] = ..., keys: _Optional[_Iterable[bytes]] = ..., version: _Optional[str] = ..., packed: bool = ..., fields: _Optional[_Iterable[str]] = ..., score: _Optional[_Union[Score, _Mapping]] = ...) -> None: ...

class MultiGetResponse(_message.Message):
    __slots__ = ["missing", "packed_sizes", "packed_values", "packed_width", "results", "scores", "top", "version", "withdrawn_through"]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    PACKED_SIZES_FIELD_NUMBER: _ClassVar[int]
    PACKED_VALUES_FIELD_NUMBER: _ClassVar[int]
    PACKED_WIDTH_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TOP_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WITHDRAWN_THROUGH_FIELD_NUMBER: _ClassVar[int]
    missing: _containers.RepeatedScalarFieldContainer[int]
    packed_sizes: _containers.RepeatedScalarFieldContainer[int]
    packed_values: bytes
    packed_width: int
    results: _containers.RepeatedCompositeFieldContainer[GetResponse]
    scores: _containers.RepeatedScalarFieldContainer[float]
    top: _containers.RepeatedScalarFieldContainer[int]
    version: str
    withdrawn_through: str
    def __init__(self, results: _Optional[_Iterable[_Union[GetResponse, _Mapping]]] = ..., version: _Optional[str] = ..., packed_values: _Optional[bytes] = ..., packed_sizes: _Optional[_Iterable[int]] = ..., missing: _Optional[_Iterable[int]] = ..., packed_width: _Optional[int] = ..., scores: _Optional[_Iterable[float]] = ..., top: _Optional[_Iterable[int]] = ..., withdrawn_through: _Optional[str] = ...) -> None: ...

class ScanRequest(_message.Message):
    __slots__ = ["end", "limit", "prefix", "start", "table", "version"]
    END_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    end: bytes
    limit: int
    prefix: bytes
    start: bytes
    table: str
    version: str
    def __init__(self, table: _Optional[str] = ..., start: _Optional[bytes] = ..., end: _Optional[bytes] = ..., prefix: _Optional[bytes] = ..., limit: _Optional[int] = ..., version: _Optional[str] = ...) -> None: ...

class ScanResponse(_message.Message):
    __slots__ = ["entries", "more", "version", "withdrawn_through"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WITHDRAWN_THROUGH_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[KeyValue]
    more: bool
    version: str
    withdrawn_through: str
    def __init__(self, entries: _Optional[_Iterable[_Union[KeyValue, _Mapping]]] = ..., version: _Optional[str] = ..., more: bool = ..., withdrawn_through: _Optional[str] = ...) -> None: ...

class Score(_message.Message):
    __slots__ = ["field", "query", "similarity", "top_k"]
    class Similarity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    COSINE: Score.Similarity
    DOT_PRODUCT: Score.Similarity
    FIELD_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    field: str
    query: _containers.RepeatedScalarFieldContainer[float]
    similarity: Score.Similarity
    top_k: int
    def __init__(self, field: _Optional[str] = ..., similarity: _Optional[_Union[Score.Similarity, str]] = ..., query: _Optional[_Iterable[float]] = ..., top_k: _Optional[int] = ...) -> None: ...

class TableInfo(_message.Message):
    __slots__ = ["file_size", "format", "key_count", "key_width", "max_key_length", "name", "pinned", "previous_version", "repository_version", "rolled_back_versions", "schema_json", "serving_version", "shard", "shard_count", "versions_on_disk", "withdrawn_through"]
    FILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    KEY_COUNT_FIELD_NUMBER: _ClassVar[int]
    KEY_WIDTH_FIELD_NUMBER: _ClassVar[int]
    MAX_KEY_LENGTH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_VERSION_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_VERSION_FIELD_NUMBER: _ClassVar[int]
    ROLLED_BACK_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    SERVING_VERSION_FIELD_NUMBER: _ClassVar[int]
    SHARD_COUNT_FIELD_NUMBER: _ClassVar[int]
    SHARD_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_ON_DISK_FIELD_NUMBER: _ClassVar[int]
    WITHDRAWN_THROUGH_FIELD_NUMBER: _ClassVar[int]
    file_size: int
    format: str
    key_count: int
    key_width: int
    max_key_length: int
    name: str
    pinned: bool
    previous_version: str
    repository_version: str
    rolled_back_versions: _containers.RepeatedScalarFieldContainer[str]
    schema_json: str
    serving_version: str
    shard: int
    shard_count: int
    versions_on_disk: _containers.RepeatedScalarFieldContainer[str]
    withdrawn_through: str
    def __init__(self, name: _Optional[str] = ..., format: _Optional[str] = ..., serving_version: _Optional[str] = ..., key_count: _Optional[int] = ..., file_size: _Optional[int] = ..., versions_on_disk: _Optional[_Iterable[str]] = ..., max_key_length: _Optional[int] = ..., key_width: _Optional[int] = ..., pinned: bool = ..., rolled_back_versions: _Optional[_Iterable[str]] = ..., shard: _Optional[int] = ..., shard_count: _Optional[int] = ..., previous_version: _Optional[str] = ..., repository_version: _Optional[str] = ..., schema_json: _Optional[str] = ..., withdrawn_through: _Optional[str] = ...) -> None: ...
