"""The prefilter: whether a file's bytes, text and `ast` index can hold a finding, before anything parses it."""
