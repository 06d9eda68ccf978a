// Anchor for the shared precompiled header; the programs reuse its PCH.
