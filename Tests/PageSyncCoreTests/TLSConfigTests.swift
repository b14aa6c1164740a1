import PageSyncCore
import Testing

@Suite("TLS configuration and the AUTH transport rule")
struct TLSConfigTests {
    @Test(arguments: [
        (true, false, false, true), (false, true, false, true), (false, false, true, true), (false, false, false, false),
    ])
    func authIsAllowedOverTLSOrLoopbackOrWhenConfigured(encrypted: Bool, loopback: Bool, allowed: Bool, expected: Bool) {
        #expect(AuthTransportPolicy.allowsAuth(encrypted: encrypted, loopback: loopback, plaintextAuthAllowed: allowed) == expected)
    }

    @Test func refusalText() {
        #expect(AuthTransportPolicy.refusal == "AUTH needs TLS on this address")
    }

    @Test func validationNamesWhatIsMissingOrWrong() {
        var config = ServerConfig(stateDirectory: "/tmp/s")
        config.tls = TLSConfig(listen: ListenAddress(host: "0.0.0.0", port: 7778), certificateFile: "/c.pem", keyFile: "/k.pem")
        #expect(throws: Never.self) { try config.validate() }
        config.tls?.keyFile = ""
        #expect(throws: ConfigError("tls: a key is needed (tls.key or --tls-key)")) { try config.validate() }
        config.tls?.keyFile = "/k.pem"
        config.tls?.certificateFile = ""
        #expect(throws: ConfigError("tls: a certificate is needed (tls.cert or --tls-cert)")) { try config.validate() }
        config.tls?.certificateFile = "/c.pem"
        config.tls?.minimumVersion = "1.1"
        #expect(throws: ConfigError("tls: min-version must be 1.2 or 1.3, not \"1.1\"")) { try config.validate() }
        config.tls?.minimumVersion = "1.3"
        config.tls?.listen = config.listen
        #expect(throws: ConfigError("tls: listen address 127.0.0.1:7777 is also the plaintext listen address")) { try config.validate() }
    }

    @Test func plaintextAuthIsOffByDefault() {
        #expect(ServerConfig(stateDirectory: "/tmp/s").plaintextAuth == false)
        #expect(ServerConfig(stateDirectory: "/tmp/s").tls == nil)
    }
}
