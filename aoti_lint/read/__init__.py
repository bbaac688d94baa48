"""Reading the project: finding its files, decoding their text (notebooks and C/C++ too), reading bytes and paths."""
