-- Specs may not leak globals.
helper = 1
