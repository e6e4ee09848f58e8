/*
 * modbus_dl.c - the libmodbus entry points modbus_meter.c uses, opened on
 * first call (modbus_dl.h).  A call before a successful load fails as
 * libmodbus's own failures do (NULL or -1, errno set), with ELIBACC.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <modbus.h>

#include "modbus_dl.h"
#include "se_dynlib.h"

static struct {
	modbus_t *(*new_tcp_pi)(const char *, const char *);
	modbus_t *(*new_rtu)(const char *, int, char, int, int);
	int (*connect)(modbus_t *);
	void (*close)(modbus_t *);
	void (*free)(modbus_t *);
	int (*flush)(modbus_t *);
	int (*get_socket)(modbus_t *);
	int (*set_slave)(modbus_t *, int);
	int (*set_response_timeout)(modbus_t *, uint32_t, uint32_t);
	int (*set_byte_timeout)(modbus_t *, uint32_t, uint32_t);
	int (*read_registers)(modbus_t *, int, int, uint16_t *);
	int (*read_input_registers)(modbus_t *, int, int, uint16_t *);
	const char *(*strerror)(int);
} fn;

static const se_dynlib_sym_t syms[] = {
	{ "modbus_new_tcp_pi", &fn.new_tcp_pi },
	{ "modbus_new_rtu", &fn.new_rtu },
	{ "modbus_connect", &fn.connect },
	{ "modbus_close", &fn.close },
	{ "modbus_free", &fn.free },
	{ "modbus_flush", &fn.flush },
	{ "modbus_get_socket", &fn.get_socket },
	{ "modbus_set_slave", &fn.set_slave },
	{ "modbus_set_response_timeout", &fn.set_response_timeout },
	{ "modbus_set_byte_timeout", &fn.set_byte_timeout },
	{ "modbus_read_registers", &fn.read_registers },
	{ "modbus_read_input_registers", &fn.read_input_registers },
	{ "modbus_strerror", &fn.strerror },
};

static se_dynlib_t lib = SE_DYNLIB_INIT(SE_LIBMODBUS_SONAME, syms);

int modbus_dl_load(char *err, size_t err_len)
{
	return se_dynlib_require(&lib, err, err_len);
}

modbus_t *modbus_new_tcp_pi(const char *node, const char *service)
{
	return se_dynlib_ready(&lib) ? fn.new_tcp_pi(node, service) : NULL;
}

modbus_t *modbus_new_rtu(const char *device, int baud, char parity,
			 int data_bit, int stop_bit)
{
	return se_dynlib_ready(&lib) ? fn.new_rtu(device, baud, parity,
						  data_bit, stop_bit) : NULL;
}

/* A context exists only after a load that worked: no guard below (close
 * and free take NULL, as libmodbus's do). */
int modbus_connect(modbus_t *ctx)
{
	return fn.connect(ctx);
}

void modbus_close(modbus_t *ctx)
{
	if (ctx)
		fn.close(ctx);
}

void modbus_free(modbus_t *ctx)
{
	if (ctx)
		fn.free(ctx);
}

int modbus_flush(modbus_t *ctx)
{
	return fn.flush(ctx);
}

int modbus_get_socket(modbus_t *ctx)
{
	return fn.get_socket(ctx);
}

int modbus_set_slave(modbus_t *ctx, int slave)
{
	return fn.set_slave(ctx, slave);
}

int modbus_set_response_timeout(modbus_t *ctx, uint32_t to_sec,
				uint32_t to_usec)
{
	return fn.set_response_timeout(ctx, to_sec, to_usec);
}

int modbus_set_byte_timeout(modbus_t *ctx, uint32_t to_sec, uint32_t to_usec)
{
	return fn.set_byte_timeout(ctx, to_sec, to_usec);
}

int modbus_read_registers(modbus_t *ctx, int addr, int nb, uint16_t *dest)
{
	return fn.read_registers(ctx, addr, nb, dest);
}

int modbus_read_input_registers(modbus_t *ctx, int addr, int nb,
				uint16_t *dest)
{
	return fn.read_input_registers(ctx, addr, nb, dest);
}

/* libmodbus's words once it is loaded; before, why it did not load (the
 * only failure there is then). */
const char *modbus_strerror(int errnum)
{
	return se_dynlib_ready(&lib) ? fn.strerror(errnum) :
				       se_dynlib_error(&lib);
}
