"""The MQTT front door: the Nadine command contract, a broker chooser, an embedded broker."""
