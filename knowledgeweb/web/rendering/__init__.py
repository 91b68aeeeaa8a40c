"""The page side of the viewer: assembling a thread from the renders stored at write."""
