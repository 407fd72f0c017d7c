"""The edge: reading and writing the harness's file formats (spec §8). Not part of the pure core."""
