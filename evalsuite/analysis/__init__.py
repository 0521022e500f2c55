"""Analyses of finished runs. They read run folders only and never call an endpoint."""
