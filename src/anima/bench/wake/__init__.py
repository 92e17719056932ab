"""The wake phrase's benches: hit rate, false wakes over an hour of talk, the spotter's fit."""
