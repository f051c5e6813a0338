package tablestoretest

import (
	"fmt"
	"net/http"
)

// Error codes of the Tablestore service (the strings the SDK puts in OtsError.Code).
const (
	CodeAuthFailed              = "OTSAuthFailed"
	CodeNoPermissionAccess      = "OTSNoPermissionAccess"
	CodeParameterInvalid        = "OTSParameterInvalid"
	CodeInvalidPK               = "OTSInvalidPK"
	CodeObjectNotExist          = "OTSObjectNotExist"
	CodeObjectAlreadyExist      = "OTSObjectAlreadyExist"
	CodeTableNotReady           = "OTSTableNotReady"
	CodeConditionCheckFail      = "OTSConditionCheckFail"
	CodeRowOperationConflict    = "OTSRowOperationConflict"
	CodeQuotaExhausted          = "OTSQuotaExhausted"
	CodeCapacityUnitExhausted   = "OTSCapacityUnitExhausted"
	CodeNotEnoughCapacityUnit   = "OTSNotEnoughCapacityUnit"
	CodeTooFrequentAdjustment   = "OTSTooFrequentReservedThroughputAdjustment"
	CodeServerBusy              = "OTSServerBusy"
	CodeStorageServerBusy       = "OTSStorageServerBusy"
	CodePartitionUnavailable    = "OTSPartitionUnavailable"
	CodeTimeout                 = "OTSTimeout"
	CodeServerUnavailable       = "OTSServerUnavailable"
	CodeInternalServerError     = "OTSInternalServerError"
	CodeRequestBodyTooLarge     = "OTSRequestBodyTooLarge"
	CodeRequestTimeout          = "OTSRequestTimeout"
	CodeMethodNotAllowed        = "OTSMethodNotAllowed"
	CodeFlowControl             = "OTSFlowControl"
	CodeOutOfRowSizeLimit       = "OTSOutOfRowSizeLimit"
	CodeOutOfColumnCountLimit   = "OTSOutOfColumnCountLimit"
	messageConditionCheckFailed = "Condition check failed."
	messageTableNotExist        = "Requested table does not exist."
)

// StatusForCode returns the HTTP status the service answers with for an error code
// (from the service's published error-code table); unknown codes map to 400. The
// SDK decides retries on the code, not the status.
func StatusForCode(code string) int {
	switch code {
	case CodeParameterInvalid, CodeInvalidPK, CodeOutOfRowSizeLimit, CodeOutOfColumnCountLimit:
		return http.StatusBadRequest
	case CodeAuthFailed, CodeNoPermissionAccess, CodeConditionCheckFail, CodeQuotaExhausted,
		CodeCapacityUnitExhausted, CodeNotEnoughCapacityUnit, CodeTooFrequentAdjustment:
		return http.StatusForbidden
	case CodeObjectNotExist, CodeTableNotReady:
		return http.StatusNotFound
	case CodeObjectAlreadyExist, CodeRowOperationConflict:
		return http.StatusConflict
	case CodeServerBusy, CodeStorageServerBusy, CodePartitionUnavailable, CodeTimeout, CodeServerUnavailable:
		return http.StatusServiceUnavailable
	case CodeInternalServerError:
		return http.StatusInternalServerError
	case CodeRequestBodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeRequestTimeout:
		return http.StatusRequestTimeout
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeFlowControl:
		return http.StatusTooManyRequests
	}
	return http.StatusBadRequest
}

// MessageForCode returns the service's usual message for an error code, used when
// an injected fault does not bring its own.
func MessageForCode(code string) string {
	switch code {
	case CodeConditionCheckFail:
		return messageConditionCheckFailed
	case CodeObjectNotExist:
		return messageTableNotExist
	case CodeObjectAlreadyExist:
		return "Requested table already exists."
	case CodeTableNotReady:
		return "The table is not ready."
	case CodeRowOperationConflict:
		return "Data is being modified by the other request."
	case CodeQuotaExhausted:
		return "Too frequent table operations."
	case CodeCapacityUnitExhausted:
		return "Capacity unit is not enough."
	case CodeNotEnoughCapacityUnit:
		return "Remaining capacity unit is not enough."
	case CodeTooFrequentAdjustment:
		return "Capacity unit adjustment is too frequent."
	case CodeServerBusy, CodeStorageServerBusy:
		return "Server is busy."
	case CodePartitionUnavailable:
		return "The partition is not available."
	case CodeTimeout:
		return "Operation timeout."
	case CodeServerUnavailable:
		return "Server is not available."
	case CodeInternalServerError:
		return "Internal server error."
	case CodeAuthFailed:
		return "Signature mismatch."
	case CodeFlowControl:
		return "The requests have been throttled."
	}
	return "Injected error."
}

// otsError is a service error: the HTTP status plus the otsprotocol.Error body.
type otsError struct {
	status  int
	code    string
	message string
}

func (e *otsError) Error() string { return e.code + ": " + e.message }

func newError(code, format string, args ...any) *otsError {
	return &otsError{status: StatusForCode(code), code: code, message: fmt.Sprintf(format, args...)}
}

func errParam(format string, args ...any) *otsError {
	return newError(CodeParameterInvalid, format, args...)
}

func errInvalidPK(format string, args ...any) *otsError {
	return newError(CodeInvalidPK, format, args...)
}

func errTableNotExist() *otsError { return newError(CodeObjectNotExist, messageTableNotExist) }

func errConditionFailed() *otsError {
	return newError(CodeConditionCheckFail, messageConditionCheckFailed)
}

// errUnsupported refuses a feature this server does not model, with a message that
// says so, rather than silently behaving differently from the service.
func errUnsupported(what string) *otsError {
	return errParam("%s is not supported by tablestoretest.", what)
}
