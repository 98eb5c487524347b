"""The local data share: DS loads, stores, atomics and lane permutes."""
