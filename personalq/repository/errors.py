"""Errors that mean "not now" rather than "wrong": the repository is fine and the same request can be retried.

The web app shows them as a message in the tab that met them; nothing was written or lost.
"""


class RepositoryUnavailable(RuntimeError):
    """Base of the retryable failures: a write lock held too long, an index another process holds."""
