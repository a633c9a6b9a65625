"""Dataset readers: each turns one public benchmark file format into workspace files + queries."""
