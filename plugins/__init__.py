"""Built-in dicecup plugins, written against the public hooks only, as a third party would."""
