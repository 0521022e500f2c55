"""Asking an endpoint: the endpoint client (endpoint.py: one streamed request per item, SSE over
aiohttp, with its timings), what a run asks and gets back (exchange.py: Decoding, Request,
Response), the chunks of a streamed answer taken apart (stream.py), token logprob entries in
every shape the engines send (logprobs.py), and what went wrong and whether to retry
(errors.py). Importing this package imports none of them."""
