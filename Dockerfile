# kubetide's image for deploy/ (image: kubetide:0.1.0). Build: docker build -t kubetide:0.1.0 .
# Only Python and the package: the live commands talk to the API server and clouds over HTTPS.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir . && rm -rf /src
USER 65532:65532
ENTRYPOINT ["kubetide"]
