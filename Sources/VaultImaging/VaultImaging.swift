// VaultImaging: pictures and QR codes. Gray images, PNG and JPEG through libpng and libjpeg
// (a small C target owns their setjmp), QR encoding (libqrencode) and scanning (zbar), each
// with its limits on work and memory. Layers: docs/architecture.md.
