"""The pieces every HTML page shares, beside templates/: `page` renders a template with one way
to show values, `cards` draws a divergence as a card. The report and gallery (analysis/) and the
diff page (lossless/) draw with them; this package imports neither of those."""
