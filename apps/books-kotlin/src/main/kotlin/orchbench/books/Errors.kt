package orchbench.books

import org.springframework.http.HttpStatus
import org.springframework.http.ResponseEntity
import org.springframework.web.HttpRequestMethodNotSupportedException
import org.springframework.web.bind.annotation.ExceptionHandler
import org.springframework.web.bind.annotation.RestControllerAdvice
import org.springframework.web.servlet.resource.NoResourceFoundException
import jakarta.servlet.http.HttpServletRequest

/** A client error with the status and message both apps answer with. */
class ApiError(val status: HttpStatus, message: String) : RuntimeException(message)

/** Every error is {"error": "<message>"}, the same shape as books-node's. */
@RestControllerAdvice
class ErrorHandler {
    private fun body(status: HttpStatus, message: String) =
        ResponseEntity.status(status).body(mapOf("error" to message))

    @ExceptionHandler(ApiError::class)
    fun api(e: ApiError) = body(e.status, e.message ?: e.status.reasonPhrase)

    @ExceptionHandler(NoResourceFoundException::class)
    fun noRoute(req: HttpServletRequest) = body(HttpStatus.NOT_FOUND, "no route ${req.method} ${req.requestURI}")

    @ExceptionHandler(HttpRequestMethodNotSupportedException::class)
    fun method(req: HttpServletRequest) =
        body(HttpStatus.METHOD_NOT_ALLOWED, "method ${req.method} is not allowed on ${req.requestURI}")
}
