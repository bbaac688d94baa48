"""BLAKE2b, the digest of the cache's keys, stamps and memos, without loading OpenSSL.

``hashlib`` loads OpenSSL's ``_hashlib`` on import, which every run would pay for, and
its ``blake2b`` is the builtin ``_blake2`` module's anyway.
"""

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it: hashlib has one
    from hashlib import blake2b

__all__ = ["blake2b"]
