"""Front doors: where commands come in (console; MQTT, web and gRPC arrive with their issues)."""
