# One image for web, worker and beat; the command chooses the process.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
# Production settings, so the manifest WhiteNoise serves from is built; the key only exists for this step.
RUN DEBUG=0 SECRET_KEY=collectstatic-only-not-a-real-key ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput \
    && useradd --create-home --uid 1000 lab && chown -R lab /app
USER lab

EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "promptlab.asgi:application"]
