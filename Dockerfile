# kubetide's image for deploy/. Build it with `make image`: it is tagged kubetide:<version>, the version
# written in src/kubetide/__init__.py, which deploy/'s image tags name (tests/test_project.py checks them).
# Only Python and the package: the live commands talk to the API server and clouds over HTTPS.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN pip install --no-cache-dir . && rm -rf /src
USER 65532:65532
ENTRYPOINT ["kubetide"]
