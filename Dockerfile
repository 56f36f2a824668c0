# Pinned to an exact version (operations guide « Upgrades » says how to move it).
FROM python:3.11.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The lock file: every distribution pinned, and refused unless its hash is the one the lock names.
COPY requirements.txt .
RUN pip install --require-hashes -r requirements.txt

COPY . .

# collectstatic needs settings but no secret of the deployment: a throwaway key and broker serve the build only.
RUN SECRET_KEY=collectstatic-build-only CELERY_BROKER_URL=memory:// python manage.py collectstatic --noinput \
    && useradd --system --uid 10001 --no-create-home casino \
    && mkdir -p /app/exports \
    && chown -R casino /app/staticfiles /app/exports

USER casino
EXPOSE 8000
# /sante/ (django-health-check): database, cache, Redis, a Celery worker, free space for the exports.
HEALTHCHECK --interval=30s --timeout=15s --start-period=30s --retries=3 CMD ["python", "docker/healthcheck.py"]

# gunicorn.conf.py (in /app) writes the access and error logs as JSON lines, like the application's.
CMD ["gunicorn", "casino.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3"]
