"""The front doors' benches: MQTT, gRPC, MCP and the dashboard's WebSocket."""
