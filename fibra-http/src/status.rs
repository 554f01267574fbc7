//! Status codes' reason phrases, for the status line.

/// Defines [`reason`] and [`line`] from one table of codes and phrases.
macro_rules! phrases {
    ($($code:literal => $reason:literal,)*) => {
        /// The standard reason phrase of `status` (RFC 9110), or `""` for a code it
        /// does not name (the reason phrase is optional on the wire).
        pub fn reason(status: u16) -> &'static str {
            match status {
                $($code => $reason,)*
                _ => "",
            }
        }

        /// The HTTP/1.1 status line of `status`, CRLF included, for a code
        /// with a reason phrase: one piece to copy, made at compile time.
        pub(crate) fn line(status: u16) -> Option<&'static str> {
            match status {
                $($code => Some(concat!("HTTP/1.1 ", $code, " ", $reason, "\r\n")),)*
                _ => None,
            }
        }
    };
}

phrases! {
    100 => "Continue",
    101 => "Switching Protocols",
    200 => "OK",
    201 => "Created",
    202 => "Accepted",
    203 => "Non-Authoritative Information",
    204 => "No Content",
    205 => "Reset Content",
    206 => "Partial Content",
    300 => "Multiple Choices",
    301 => "Moved Permanently",
    302 => "Found",
    303 => "See Other",
    304 => "Not Modified",
    307 => "Temporary Redirect",
    308 => "Permanent Redirect",
    400 => "Bad Request",
    401 => "Unauthorized",
    403 => "Forbidden",
    404 => "Not Found",
    405 => "Method Not Allowed",
    406 => "Not Acceptable",
    408 => "Request Timeout",
    409 => "Conflict",
    410 => "Gone",
    411 => "Length Required",
    412 => "Precondition Failed",
    413 => "Content Too Large",
    414 => "URI Too Long",
    415 => "Unsupported Media Type",
    417 => "Expectation Failed",
    422 => "Unprocessable Content",
    429 => "Too Many Requests",
    431 => "Request Header Fields Too Large",
    500 => "Internal Server Error",
    501 => "Not Implemented",
    502 => "Bad Gateway",
    503 => "Service Unavailable",
    504 => "Gateway Timeout",
    505 => "HTTP Version Not Supported",
}

/// Whether a response with `status` carries no body, whatever the handler
/// set (1xx, 204 and 304; RFC 9112 §6.3).
pub(crate) fn forbids_body(status: u16) -> bool {
    status < 200 || status == 204 || status == 304
}
