"""Every cap the receiver holds a sender to, in one place; docs/app.md ("Limits of the receiver")
lists them. The body's own cap, WEBHOOK_MAX_BYTES, is a setting (bot/app/settings.py).

GitHub sends each delivery on a connection of its own, writes its head and body in one go (the
bodies of the events the bot routes are 3-28 KB) and gives up on an answer after 10 seconds. A
sender that does anything slower or bigger is not GitHub, and what it costs is bounded here.
"""

from __future__ import annotations

# -- the connection and the request head (webhooks/server.py) ---------------------------------
# GitHub writes a delivery's head in one go; a head not complete after this long is a stall.
HEADER_TIMEOUT = 5.0
# uvicorn's default: an idle keep-alive connection is closed after this long.
KEEP_ALIVE_TIMEOUT = 5
# h11's default, stated: a head that is still incomplete past this many bytes is refused with 400.
MAX_HEADER_BYTES = 16 * 1024
# Open connections (and requests in progress) at once. GitHub opens one connection per delivery
# and is answered in milliseconds, so a burst needs a few; past this, uvicorn answers 503.
MAX_CONNECTIONS = 128

# -- the body, before its signature is checked (webhooks/limits.py, webhooks/budget.py) --------
# GitHub gives up on a delivery it has not had an answer to within 10 s, so a body still arriving
# after that is not one GitHub is waiting on.
BODY_TIMEOUT = 10.0
# After this first second a body must keep arriving at MIN_BODY_RATE on average: a body GitHub
# sends is in within milliseconds, so only a trickle falls behind it.
BODY_GRACE = 1.0
# Bytes a second, averaged from the start of the body: at 64 KiB/s a 5 MB body would need 80 s,
# far past BODY_TIMEOUT, so the rate binds only on a sender far slower than GitHub.
MIN_BODY_RATE = 64 * 1024
# The bytes all bodies being read may hold together, in bodies at the cap (WEBHOOK_MAX_BYTES):
# counted by the bytes received, never by the length a sender declares.
BODIES_IN_FLIGHT = 4
# A body declaring at most this many bytes is small. GitHub's bodies for the bot are 3-28 KB; a
# comment and a PR description both at GitHub's 65,536-character limit, in 4-byte characters, still
# come to under 600 KB.
SMALL_BODY_BYTES = 1024 * 1024
# The part of that budget only small bodies may fill: large bodies, whoever sends them, leave this
# much room for GitHub's.
SMALL_BODIES_RESERVED = 0.25
# One source (the peer, or the client a trusted proxy names) may have this many bodies arriving at
# once, and hold at most one body at the cap (WEBHOOK_MAX_BYTES) in all.
SOURCE_BODIES = 8

# -- the delivery (webhooks/app.py) -------------------------------------------------------------
# GitHub's ids are 36-character GUIDs; the header is outside the signature and becomes a key.
MAX_DELIVERY_ID = 100
# A signed body is claimed by its digest for this long, whatever its delivery id (webhooks/app.py).
BODY_CLAIM_TTL = 3600.0
