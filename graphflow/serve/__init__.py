"""``graphflow serve``: a trained model as an HTTP JSON service (docs/inference.md).

:mod:`service` holds the model, the served graph and its precomputed outputs, and answers
requests as plain data (:class:`~graphflow.serve.service.RequestError` for a bad one);
:mod:`app` is the Starlette application around it (routes, size limit, JSON errors).
"""
