package orchbench.books

import org.springframework.boot.autoconfigure.SpringBootApplication
import org.springframework.boot.runApplication
import java.sql.DriverManager
import java.sql.SQLException

@SpringBootApplication
class Application

/**
 * Waits for PostgreSQL before Spring starts: Boot gives up at once when its
 * first connection fails, and in a Nomad group the database may still be
 * starting (or its address not yet rendered). DB_WAIT_SECONDS bounds the
 * wait; past it the process exits non-zero so the orchestrator sees it.
 */
fun waitForDatabase(url: String, user: String, password: String, waitSeconds: Long) {
    val deadline = System.nanoTime() + waitSeconds * 1_000_000_000
    var attempt = 0
    while (true) {
        attempt++
        try {
            DriverManager.getConnection(url, user, password).use { it.createStatement().execute("SELECT 1") }
            if (attempt > 1) println("books-kotlin: database $url answered after $attempt attempts")
            return
        } catch (e: SQLException) {
            if (System.nanoTime() > deadline) {
                System.err.println("books-kotlin: database $url still unreachable after ${waitSeconds}s: ${e.message}")
                kotlin.system.exitProcess(1)
            }
            System.err.println("books-kotlin: waiting for database $url (attempt $attempt): ${e.message}")
            Thread.sleep(1000)
        }
    }
}

/** DB_ADDR (host:port, as the pack's template renders it), or DB_HOST and DB_PORT. */
fun dbAddress(env: Map<String, String>): String {
    val addr = env["DB_ADDR"]
    if (addr != null) {
        require(addr.lastIndexOf(':') > 0) { "DB_ADDR \"$addr\" is not host:port" }
        return addr
    }
    return "${env["DB_HOST"] ?: "127.0.0.1"}:${env["DB_PORT"] ?: "5432"}"
}

fun main(args: Array<String>) {
    val env = System.getenv()
    val url = "jdbc:postgresql://${dbAddress(env)}/${env["DB_NAME"] ?: "books"}"
    // the one URL both the wait and Spring use (a system property outranks application.properties)
    System.setProperty("spring.datasource.url", url)
    waitForDatabase(url, env["DB_USER"] ?: "books", env["DB_PASSWORD"] ?: "books", (env["DB_WAIT_SECONDS"] ?: "120").toLong())
    runApplication<Application>(*args)
}
