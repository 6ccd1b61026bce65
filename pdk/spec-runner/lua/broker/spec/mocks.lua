-- The http_mock servers started, by port: the proxy answers a service on one of them in process.
return { started = {} }
