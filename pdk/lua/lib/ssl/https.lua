-- LuaSec's ssl.https (written for broker): socket.http's API for https URLs, answered from the
-- fixture's `outbound` as resty.http's requests are.
return require("socket.http")._make("ssl.https", 443)
