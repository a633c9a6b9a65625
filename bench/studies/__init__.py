"""One-off studies whose conclusion is recorded (index: README.md here); kept to re-run them."""
